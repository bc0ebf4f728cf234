package dev.sluice.sender.idempotency;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sent marks inside one process (tests, {@code budget.mode=local}): they protect against resending after a
 * rebalance within the process's life, not after a crash. Entries expire after the TTL and are swept when
 * the map grows.
 */
public final class InMemorySentMarks implements SentMarks {
    private record Entry(Mark mark, long expiresAtMs) {
    }

    private final Map<String, Entry> marks = new ConcurrentHashMap<>();
    private final Clock clock;
    private final long ttlMs;

    public InMemorySentMarks(Duration ttl, Clock clock) {
        this.ttlMs = ttl.toMillis();
        this.clock = clock;
    }

    public InMemorySentMarks(Duration ttl) {
        this(ttl, Clock.systemUTC());
    }

    @Override
    public Mark get(String botId, String messageId) {
        Entry e = marks.get(RedisSentMarks.key(botId, messageId));
        return e == null || e.expiresAtMs() <= clock.millis() ? Mark.NONE : e.mark();
    }

    @Override
    public void markSent(String botId, String messageId, String status, Long providerMessageId) {
        put(botId, messageId, new Mark(State.SENT, status, providerMessageId));
    }

    @Override
    public void markSent(String botId, String messageId, String status, Long providerMessageId, long atMs,
                         String resultKey) {
        put(botId, messageId, new Mark(State.SENT, status, providerMessageId, atMs, resultKey));
    }

    @Override
    public void markResultWritten(String botId, String messageId, String resultKey) {
        Mark previous = get(botId, messageId);
        put(botId, messageId, new Mark(State.RESULT_WRITTEN, previous.status(), previous.providerMessageId(),
                clock.millis(), resultKey != null ? resultKey : previous.resultKey()));
    }

    private void put(String botId, String messageId, Mark mark) {
        long now = clock.millis();
        if (marks.size() > 100_000) {
            marks.values().removeIf(e -> e.expiresAtMs() <= now);
        }
        marks.put(RedisSentMarks.key(botId, messageId), new Entry(mark, now + ttlMs));
    }

    @Override
    public void close() {
        // nothing to release
    }
}
