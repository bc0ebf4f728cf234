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
        for (Quake q : quakes) {
            Duration offset = Duration.ofMillis((long) (Duration.between(first, q.time()).toMillis() / speedup));
            for (String chat : audience.followersOf(q)) {
                out.add(new Planned(offset, notification(q, chat, createdAt.plus(offset))));
            }
        }
        return List.copyOf(out);
    }

    static Notification notification(Quake q, String chatId, Instant createdAt) {
        String text = String.format(Locale.ROOT, "M%.1f earthquake - %s - %s [%s]", q.magnitude(), q.place(),
                HUMAN.format(q.time()), q.id());
        return Notification.newBuilder()
                .setId(q.id() + ":" + chatId)
                .setBotId(BOT_ID)
                .setChatId(chatId)
                .setKind("quake.alert")
                .setEventClass(q.magnitude() >= 7.0 ? NotificationClass.CRITICAL : null)
                .setEntity(q.region())
                .setText(text)
                .setCreatedAt(createdAt)
                .setAttributes(Map.of("quake_id", q.id(), "magnitude", Double.toString(q.magnitude()), "region", q.region()))
                .build();
    }
}
