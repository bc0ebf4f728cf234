package dev.sluice.sender.idempotency;

import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.redis.RedisEndpoint;
import dev.sluice.sender.redis.RedisSession;
import dev.sluice.sender.budget.MarkWrites;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import io.lettuce.core.SetArgs;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sent marks in Redis: {@code SET sluice:{bot}:sent:<message id> <value> PX <ttl>}, the value being
 * {@code FLIGHT|||<at ms>|<result key>}, {@code SENT|<status>|<provider message id>|<at ms>|<result key>} or
 * {@code DONE|||<at ms>|<result key>} (the result key: the normalised chat id the result is written under; a DONE of
 * the previous version is {@code DONE||||<result key>}, of the one before {@code DONE||}). The bot's hash
 * tag keeps the key in the bot's Redis Cluster slot, next to its budget keys. One {@link RedisSession} (a server,
 * a Sentinel set or a Redis Cluster, whatever {@code redis.url} names; on a cluster each mark goes to the primary
 * of its bot's slot), shared by every sending thread, opened on first use: a sender must start while Redis is
 * down (its budget has an outage mode), so a connect failure is a {@link SentMarksUnavailableException} of that
 * call, not of the constructor. Once open, Lettuce reconnects it by itself (and follows a failover).
 *
 * <p><b>Folded writes</b> (issue 19, {@link #foldWritesInto}): when the budget lives in the same Redis, the grant
 * writes the message's in-flight mark ({@link #inFlight}, op 'acquire' flag 16), and the SENT mark after the provider's
 * answer ({@link #markSentLater}) and the DONE mark after the result are not one SET each: they wait in a bounded
 * {@link MarkWrites} buffer and ride on their bot's next budget call ({@code budget.lua} writes them in the same
 * script call; on one Redis node any bot's call carries any bot's marks, on a cluster those of its slot); a daemon
 * thread writes what is left every {@code sender.sent.mark.flush.interval.ms}, one script call (op 'marks') per
 * {@link MarkWrites#MAX_PER_CALL} marks of one node or one cluster slot. A SENT waits up to {@link MarkWrites#holdNanos()} for its DONE, which replaces
 * it (one write per message instead of two). A full buffer writes the mark at once as before. A SENT lost with a killed
 * sender leaves FLIGHT: the next owner looks for the result on the results topic and sends only when there is none
 * (Telegram has no idempotency key, so FLIGHT cannot tell a call made from one not made; sending keeps every message
 * delivered, and a message whose result reached the topic is never sent again). A lost DONE leaves SENT or FLIGHT:
 * a lookup, never a second result.
 *
 * <p>Threads: any sending thread, the producer's callback thread and the flush thread call it; the session is opened
 * once under this object's monitor, the counters are {@link java.util.concurrent.atomic.LongAdder}s, the buffer is
 * thread-safe.
 */
public final class RedisSentMarks implements SentMarks {
    private static final Logger log = LoggerFactory.getLogger(RedisSentMarks.class);
    /** Every flush fails during an outage: one WARN line per 10 s, the rest at DEBUG. */
    private final dev.sluice.sender.ThrottledWarning flushWarning =
            new dev.sluice.sender.ThrottledWarning(log, 10_000, System::currentTimeMillis);
    private final io.lettuce.core.resource.ClientResources resources;
    private final RedisEndpoint endpoint;
    private final Duration commandTimeout;
    private volatile RedisSession<String, String> session;
    private boolean closed;
    private final long ttlMs;
    private final String redisUrl;
    private final java.util.concurrent.atomic.LongAdder reads = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder writes = new java.util.concurrent.atomic.LongAdder();
    /** {@code budget.lua}, whose op 'marks' the flush calls (the same script as the budget's: loaded once per node). */
    private static final String SCRIPT = dev.sluice.sender.budget.RedisGcraBudget.loadScript();
    private static final String SCRIPT_SHA = dev.sluice.sender.budget.RedisGcraBudget.scriptSha1();
    /** Set once by {@link #foldWritesInto} (volatile): the DONE marks wait there; null: one SET each. */
    private volatile MarkWrites pending;
    private java.util.concurrent.ScheduledExecutorService flusher; // guarded by this
    /** Fails the mark read and the SENT write at once while Redis does not answer (a stall), see {@link MarksCircuit}. */
    private final MarksCircuit circuit;

    public RedisSentMarks(String redisUrl, Duration ttl, Duration commandTimeout) {
        this(redisUrl, ttl, commandTimeout, null);
    }

    /**
     * @param redisUrl any form {@link RedisEndpoint} parses
     * @param registry where Lettuce records its command latencies (tag {@code client=sent_marks}, see
     *                 {@link dev.sluice.sender.budget.LettuceResources}); null: not recorded
     * @throws IllegalArgumentException if {@code redisUrl} cannot be parsed (the message has no credentials)
     */
    public RedisSentMarks(String redisUrl, Duration ttl, Duration commandTimeout,
                          io.micrometer.core.instrument.MeterRegistry registry) {
        this(redisUrl, ttl, commandTimeout, registry, 3, Duration.ofSeconds(1));
    }

    /** @param minimumCalls, probeInterval the breaker of the synchronous calls ({@link MarksCircuit}) */
    public RedisSentMarks(String redisUrl, Duration ttl, Duration commandTimeout,
                          io.micrometer.core.instrument.MeterRegistry registry, int minimumCalls, Duration probeInterval) {
        this.circuit = new MarksCircuit(minimumCalls, probeInterval);
        this.redisUrl = redisUrl;
        this.endpoint = RedisEndpoint.parse(redisUrl);
        this.resources = dev.sluice.sender.budget.LettuceResources.create(registry, "sent_marks");
        this.commandTimeout = commandTimeout;
        this.ttlMs = ttl.toMillis();
    }

    /** The shared session, opened on first use; throws Lettuce's RedisException when Redis cannot be reached. */
    private RedisSession<String, String> session() {
        RedisSession<String, String> c = session;
        if (c != null) {
            return c;
        }
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("sent marks are closed");
            }
            if (session == null) {
                session = RedisSession.connect(endpoint, StringCodec.UTF8, commandTimeout, resources);
            }
            return session;
        }
    }

    /** {@code sluice:{<bot>}:sent:<message id>}. */
    static String key(String botId, String messageId) {
        return BudgetKeys.sentMark(botId, messageId);
    }

    @Override
    public java.util.Optional<String> redisUrl() {
        return java.util.Optional.of(redisUrl);
    }

    @Override
    public long redisReads() {
        return reads.sum();
    }

    @Override
    public long redisWrites() {
        return writes.sum();
    }

    @Override
    public Mark get(String botId, String messageId) {
        String v;
        try {
            reads.increment();
            v = circuit.call(() -> session().sync().get(key(botId, messageId)));
        } catch (RedisException e) {
            throw new SentMarksUnavailableException("could not read the sent mark of " + messageId + ": "
                    + e.getMessage(), e);
        }
        return MarkValues.parse(v);
    }

    @Override
    public void markSent(String botId, String messageId, String status, Long providerMessageId) {
        markSent(botId, messageId, status, providerMessageId, 0, null);
    }

    @Override
    public void markSent(String botId, String messageId, String status, Long providerMessageId, long atMs,
                         String resultKey) {
        try {
            writes.increment();
            circuit.call(() -> session().sync().set(key(botId, messageId), MarkValues.value("SENT", status, providerMessageId) + "|"
                    + atMs + "|" + (resultKey == null ? "" : resultKey), SetArgs.Builder.px(ttlMs)));
        } catch (RedisException e) {
            throw new SentMarksUnavailableException("could not write the sent mark of " + messageId + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public boolean defersWrites() {
        return pending != null;
    }

    /** Queued when folded (a full buffer: written now, synchronously), else as {@link #markSent}. */
    @Override
    public void markSentLater(String botId, String messageId, String status, Long providerMessageId, long atMs,
                              String resultKey) {
        MarkWrites folded = pending;
        String v = MarkValues.value("SENT", status, providerMessageId) + "|" + atMs + "|" + (resultKey == null ? "" : resultKey);
        if (folded == null || !folded.offerHeld(botId, messageId, v)) { // the DONE may replace it before it is written
            markSent(botId, messageId, status, providerMessageId, atMs, resultKey);
        }
    }

    @Override // DONE|||<at ms>|<result key>: the chat stays, so the same id for another chat is not taken for a
    // redelivery; the time tells a replay's own DONE from an earlier attempt's (Outcomes.replay)
    public void markResultWritten(String botId, String messageId, String resultKey) {
        String done = MarkValues.value("DONE", null, null)
                + (resultKey == null ? "" : "|" + System.currentTimeMillis() + "|" + resultKey);
        MarkWrites folded = pending;
        if (folded != null && folded.offer(botId, messageId, done)) {
            return; // rides on the bot's next budget call, or on the next flush
        }
        // Asynchronous: called from the producer's callback thread, which must never block on Redis.
        writes.increment();
        RedisSession<String, String> c;
        try {
            c = session();
        } catch (RedisException e) {
            log.warn("could not mark the result of {} as written: {}", messageId, e.toString());
            return;
        }
        // bounded: nobody waits for it, but a write that has no answer within the command timeout is reported
        c.async().set(key(botId, messageId), done, SetArgs.Builder.px(ttlMs))
                .toCompletableFuture().orTimeout(commandTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .exceptionally(e -> {
                    log.warn("could not mark the result of {} as written: {}", messageId, e.toString());
                    return null;
                });
    }

    /**
     * From now on the DONE marks wait in {@code writes} for a budget call of their bot ({@link MarkWrites}) instead of
     * one SET each; every {@code flushInterval} a daemon thread writes what is left, one script call per call group. Call
     * once, at wiring, and only when the budget carries the writes ({@code BudgetPort#foldMarkWrites} returned true).
     */
    public synchronized void foldWritesInto(MarkWrites writes, Duration flushInterval) {
        if (pending != null || closed) {
            throw new IllegalStateException("sent-mark writes are already folded, or the marks are closed");
        }
        pending = writes;
        flusher = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-sent-mark-flush");
            t.setDaemon(true);
            return t;
        });
        long ms = flushInterval.toMillis();
        // every half interval, the bots whose marks waited a whole interval: a mark waits at most 1.5 intervals
        long tick = Math.max(1, ms / 2);
        flusher.scheduleWithFixedDelay(() -> flushQuietly(TimeUnit.MILLISECONDS.toNanos(ms)), tick, tick,
                TimeUnit.MILLISECONDS);
    }

    private void flushQuietly(long ageNanos) {
        try {
            flush(ageNanos);
        } catch (RuntimeException e) {
            log.warn("sent-mark flush failed: {}", e.toString());
        }
    }

    /**
     * Writes every pending mark now, one script call (op 'marks' of {@code budget.lua}) per call group of the buffer
     * and per {@link MarkWrites#MAX_PER_CALL} marks (one node: any bots' marks together; a Redis Cluster: one call per
     * slot, the calls of different slots sent together); a failed call puts its marks back (dropped with a warning if
     * the buffer is full: a lost DONE only makes a redelivery look its result up on the results topic).
     *
     * @return the marks written
     */
    public int flush() {
        return flush(0);
    }

    /** One flush call on its way: its group, its marks by bot, and the reply. */
    private record Call(Object group, Map<String, List<MarkWrites.Write>> marks, int size, String[] keys, String[] args,
                        java.util.concurrent.CompletableFuture<Long> reply) {
    }

    /** As {@link #flush()}, for the call groups with a bot whose marks waited at least {@code ageNanos}. */
    private int flush(long ageNanos) {
        MarkWrites folded = pending;
        if (folded == null) {
            return 0;
        }
        int written = 0;
        List<Object> groups = folded.groupsWaitingAtLeast(ageNanos);
        while (!groups.isEmpty()) {
            // the timed flush leaves a SENT that may still be replaced by its DONE (MarkWrites#offerHeld); flush() not
            List<Call> calls = new ArrayList<>();
            for (Object group : groups) {
                Map<String, List<MarkWrites.Write>> batch = folded.drainGroup(group, MarkWrites.MAX_PER_CALL, ageNanos == 0);
                if (!batch.isEmpty()) {
                    calls.add(send(group, batch, folded.ttlMs()));
                }
            }
            List<Object> again = new ArrayList<>();
            for (Call call : calls) { // sent before any answer is awaited: pipelined, each to its slot's primary
                try {
                    await(call);
                    written += call.size();
                    if (call.size() == MarkWrites.MAX_PER_CALL) {
                        again.add(call.group()); // maybe more in the group
                    }
                } catch (RedisException e) {
                    int dropped = 0;
                    for (Map.Entry<String, List<MarkWrites.Write>> m : call.marks().entrySet()) {
                        dropped += folded.restore(m.getKey(), m.getValue());
                    }
                    flushWarning.warn("could not flush " + call.size() + " sent marks of bots " + call.marks().keySet()
                            + " (" + (call.size() - dropped) + " kept for the next flush, " + dropped
                            + " dropped as the buffer is full): " + e);
                }
            }
            groups = again;
        }
        return written;
    }

    private Call send(Object group, Map<String, List<MarkWrites.Write>> batch, long ttl) {
        int n = 0;
        for (List<MarkWrites.Write> w : batch.values()) {
            n += w.size();
        }
        String[] keys = new String[n];
        String[] args = new String[n + 2];
        args[0] = "marks";
        args[1] = Long.toString(ttl);
        int i = 0;
        for (Map.Entry<String, List<MarkWrites.Write>> e : batch.entrySet()) {
            for (MarkWrites.Write w : e.getValue()) {
                keys[i] = key(e.getKey(), w.messageId());
                args[i + 2] = w.value();
                i++;
            }
        }
        java.util.concurrent.CompletableFuture<Long> reply;
        try {
            writes.increment();
            reply = session().async().evalsha(SCRIPT_SHA, ScriptOutputType.INTEGER, keys, args).toCompletableFuture()
                    .thenApply(Long.class::cast);
        } catch (RedisException e) {
            reply = java.util.concurrent.CompletableFuture.failedFuture(e);
        }
        return new Call(group, batch, n, keys, args, reply);
    }

    /** Waits (at most the command timeout) for a flush call; on NOSCRIPT loads the script by one EVAL of the call. */
    private void await(Call call) {
        try {
            call.reply().get(commandTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof io.lettuce.core.RedisNoScriptException) {
                writes.increment();
                session().sync().eval(SCRIPT, ScriptOutputType.INTEGER, call.keys(), call.args());
                return;
            }
            throw e.getCause() instanceof RedisException r ? r : new RedisException(String.valueOf(e.getCause()), e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new io.lettuce.core.RedisCommandTimeoutException("flush call: no answer within " + commandTimeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisException("interrupted while flushing sent marks", e);
        }
    }

    @Override
    public void close() {
        java.util.concurrent.ScheduledExecutorService f;
        synchronized (this) {
            f = flusher;
        }
        if (f != null) {
            f.shutdown();
            try {
                f.awaitTermination(commandTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            flushQuietly(0); // what waits is written before the connection closes (best effort)
        }
        RedisSession<String, String> c;
        synchronized (this) {
            closed = true;
            c = session;
        }
        if (c != null) {
            c.close();
        }
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
