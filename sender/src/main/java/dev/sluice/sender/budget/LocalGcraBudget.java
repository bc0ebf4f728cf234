package dev.sluice.sender.budget;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;

/**
 * The same decision as {@code budget.lua}, inside one process: penalty gate, global GCRA and chat GCRA,
 * all or nothing, integer microseconds, waits rounded up to whole milliseconds.
 *
 * <p>It only sees this process's traffic: N senders with a local budget each send up to N times the
 * bot's limit. That is the point of the demo's {@code --budget local} mode, and the reason the shared
 * {@link RedisGcraBudget} exists.
 *
 * <p>The GCRA here is a minimal private one; the pure-Java algorithms of module {@code limits} are the
 * reference implementation and may replace it.
 */
public final class LocalGcraBudget implements BudgetPort {
    /** Expired entries are swept when the table grows past this size, so memory stays bounded by activity. */
    private static final int SWEEP_THRESHOLD = 10_000;

    private final BudgetLimits limits;
    private final Clock clock;
    /** Key (same names as in Redis) → TAT or gate-lift time, microseconds since the epoch. */
    private final Map<String, Long> times = new HashMap<>();
    private int sweepAt = SWEEP_THRESHOLD;

    public LocalGcraBudget(BudgetLimits limits, Clock clock) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    public LocalGcraBudget(BudgetLimits limits) {
        this(limits, Clock.systemUTC());
    }

    @Override
    public synchronized Decision tryAcquire(String botId, String chatId) {
        long now = nowMicros();
        sweepIfLarge(now);
        Long gate = times.get(BudgetKeys.chatGate(botId, chatId));
        if (gate != null && gate > now) {
            return Decision.refused(ceilMillis(gate - now), Limit.GATE);
        }
        String chatKey = BudgetKeys.chatTat(botId, chatId);
        String globalKey = BudgetKeys.globalTat(botId);
        long chatTat = Math.max(times.getOrDefault(chatKey, now), now);
        long globalTat = Math.max(times.getOrDefault(globalKey, now), now);
        long chatWait = Math.max(0, chatTat - limits.chatToleranceMicros() - now);
        long globalWait = Math.max(0, globalTat - limits.globalToleranceMicros() - now);
        if (chatWait > 0 || globalWait > 0) {
            return chatWait >= globalWait
                    ? Decision.refused(ceilMillis(chatWait), Limit.CHAT)
                    : Decision.refused(ceilMillis(globalWait), Limit.GLOBAL);
        }
        times.put(chatKey, chatTat + limits.chatIntervalMicros());
        times.put(globalKey, globalTat + limits.globalIntervalMicros());
        return Decision.grant();
    }

    @Override
    public synchronized void penalizeChat(String botId, String chatId, Duration penalty) {
        long now = nowMicros();
        long until = now + Math.max(1, penalty.toMillis()) * 1000L;
        times.merge(BudgetKeys.chatGate(botId, chatId), until, Math::max);
    }

    private void sweepIfLarge(long now) {
        if (times.size() < sweepAt) {
            return;
        }
        // A TAT or gate in the past means a full bucket / no gate: the same as a missing entry.
        for (Iterator<Long> it = times.values().iterator(); it.hasNext(); ) {
            if (it.next() <= now) {
                it.remove();
            }
        }
        sweepAt = Math.max(SWEEP_THRESHOLD, times.size() * 2);
    }

    private long nowMicros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, clock.instant());
    }

    private static long ceilMillis(long micros) {
        return (micros + 999) / 1000;
    }

    @Override
    public void close() {
        // nothing to release
    }
}
