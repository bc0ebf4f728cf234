package dev.sluice.app.demo;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns real earthquakes into the notifications the demo replays: one per (quake, follower), released
 * at the quake's time compressed by a speed-up, so the real bursts of the aftershock sequence arrive
 * as bursts.
 */
public final class DemoScenario {
    /** Bot id of the demo bot (a name; its token lives in the sender config only). */
    public static final String BOT_ID = "quakes";
    private static final DateTimeFormatter HUMAN = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
            .withZone(ZoneOffset.UTC);

    /**
     * A notification and when to produce it, relative to the replay start.
     *
     * @param releaseOffset time after the replay start at which the producer writes it
     * @param notification  the notification
     */
    public record Planned(Duration releaseOffset, Notification notification) {
    }

    private DemoScenario() {
    }

    /**
     * How the demo classifies real quakes (issue 5): M7+ is CRITICAL (with a deadline); a smaller quake in
     * the region of an earlier M7+ within {@link #AFTERSHOCK_WINDOW} is an aftershock update, COLLAPSIBLE
     * by region (only the latest state matters); everything else is ROUTINE.
     */
    public static final double CRITICAL_MAGNITUDE = 7.0;
    public static final Duration AFTERSHOCK_WINDOW = Duration.ofDays(7);
    /** A critical alert older than this is useless: it ends as EXPIRED instead of arriving late. */
    public static final Duration CRITICAL_DEADLINE = Duration.ofMinutes(5);

    /**
     * @param replayDuration the whole catalogue is replayed within this wall-clock duration
     */
    public static List<Planned> plan(List<Quake> quakes, Audience audience, Duration replayDuration, Instant createdAt) {
        if (quakes.isEmpty()) {
            return List.of();
        }
        Instant first = quakes.get(0).time();
        long spanMillis = Math.max(1, Duration.between(first, quakes.get(quakes.size() - 1).time()).toMillis());
        double speedup = (double) spanMillis / Math.max(1, replayDuration.toMillis());
        List<Planned> out = new ArrayList<>();
        List<Quake> majors = new ArrayList<>();
        for (Quake q : quakes) {
            Duration offset = Duration.ofMillis((long) (Duration.between(first, q.time()).toMillis() / speedup));
            NotificationClass cls = classify(q, majors);
            if (q.magnitude() >= CRITICAL_MAGNITUDE) {
                majors.add(q);
            }
            for (String chat : audience.followersOf(q)) {
                out.add(new Planned(offset, notification(q, cls, chat, createdAt.plus(offset))));
            }
        }
        return List.copyOf(out);
    }

    static NotificationClass classify(Quake q, List<Quake> earlierMajors) {
        if (q.magnitude() >= CRITICAL_MAGNITUDE) {
            return NotificationClass.CRITICAL;
        }
        boolean aftershock = earlierMajors.stream().anyMatch(m -> m.region().equals(q.region())
                && !q.time().isBefore(m.time()) && Duration.between(m.time(), q.time()).compareTo(AFTERSHOCK_WINDOW) <= 0);
        return aftershock ? NotificationClass.COLLAPSIBLE : NotificationClass.ROUTINE;
    }

    static Notification notification(Quake q, NotificationClass cls, String chatId, Instant createdAt) {
        String text = String.format(Locale.ROOT, "M%.1f earthquake - %s - %s [%s]", q.magnitude(), q.place(),
                HUMAN.format(q.time()), q.id());
        return Notification.newBuilder()
                .setId(q.id() + ":" + chatId)
                .setBotId(BOT_ID)
                .setChatId(chatId)
                .setKind(switch (cls) {
                    case CRITICAL -> "quake.major";
                    case COLLAPSIBLE -> "quake.aftershock";
                    case ROUTINE -> "quake.alert";
                })
                .setEventClass(cls)
                .setEntity(cls == NotificationClass.COLLAPSIBLE ? "aftershocks in " + q.region() : q.id())
                .setExpiresAt(cls == NotificationClass.CRITICAL ? createdAt.plus(CRITICAL_DEADLINE) : null)
                .setText(text)
                .setCreatedAt(createdAt)
                .setAttributes(Map.of("quake_id", q.id(), "magnitude", Double.toString(q.magnitude()), "region", q.region()))
                .build();
    }
}
