package dev.sluice.limits;

import java.time.Clock;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * One limiter per key (e.g. per chat id) with bounded memory: at most {@code maxKeys} limiters are
 * kept, in least-recently-used order.
 *
 * <p>Dropping an idle key changes no decision ({@link RateLimiter#isIdle}); {@link #purgeIdle}
 * drops all of them. When a new key arrives with the map full, the least recently used key is
 * dropped even if it is not idle; that key then starts again with a full burst, so it may exceed its
 * own limit once. Such drops are counted ({@link #activeEvictions()}): size {@code maxKeys} above
 * the number of keys active within one refill time ({@code burst / rate}) and it stays 0.
 *
 * <p>Memory: the per-key memory of the algorithm (GCRA: one {@code long}) plus a map entry, times
 * at most {@code maxKeys}. Not thread-safe.
 *
 * @param <K> the key type, with proper {@code equals}/{@code hashCode}
 */
public final class KeyedLimiter<K> {

    private final Supplier<? extends RateLimiter> factory;
    private final int maxKeys;
    private final Clock clock;
    private final LinkedHashMap<K, RateLimiter> limiters;
    private long activeEvictions;

    /**
     * @param factory creates the limiter of a new key, e.g. {@code () -> new Gcra(Rate.perSecond(1), 3)}
     * @param maxKeys at most this many keys are remembered, ≥ 1
     * @param clock   the clock read by {@link #tryAcquire(Object)}
     */
    public KeyedLimiter(Supplier<? extends RateLimiter> factory, int maxKeys, Clock clock) {
        if (maxKeys < 1) {
            throw new IllegalArgumentException("maxKeys: must be >= 1, got " + maxKeys);
        }
        this.factory = Objects.requireNonNull(factory, "factory");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.maxKeys = maxKeys;
        this.limiters = new LinkedHashMap<>(16, 0.75f, true);
    }

    /** A keyed GCRA: one {@code long} per key. */
    public static <K> KeyedLimiter<K> gcra(Rate rate, long burst, int maxKeys, Clock clock) {
        GcraPolicy policy = new GcraPolicy(rate, burst);
        return new KeyedLimiter<>(() -> new Gcra(policy), maxKeys, clock);
    }

    /** Decides one request of {@code key} at {@code clock.millis()}. */
    public Decision tryAcquire(K key) {
        return tryAcquire(key, clock.millis());
    }

    /** Decides one request of {@code key} at {@code nowMillis} (epoch ms). */
    public Decision tryAcquire(K key, long nowMillis) {
        Objects.requireNonNull(key, "key");
        RateLimiter limiter = limiters.get(key);
        if (limiter == null) {
            if (limiters.size() >= maxKeys) {
                evictOne(nowMillis);
            }
            limiter = factory.get();
            limiters.put(key, limiter);
        }
        return limiter.tryAcquire(nowMillis);
    }

    private void evictOne(long nowMillis) {
        Iterator<Map.Entry<K, RateLimiter>> eldest = limiters.entrySet().iterator();
        Map.Entry<K, RateLimiter> entry = eldest.next();
        if (!entry.getValue().isIdle(nowMillis)) {
            activeEvictions++;
        }
        eldest.remove();
    }

    /** Drops every key whose limiter is idle at {@code nowMillis}; returns how many were dropped. */
    public int purgeIdle(long nowMillis) {
        int before = limiters.size();
        limiters.values().removeIf(l -> l.isIdle(nowMillis));
        return before - limiters.size();
    }

    /** Keys currently remembered. */
    public int size() {
        return limiters.size();
    }

    /** How many non-idle keys were dropped because the map was full (each may exceed its limit once). */
    public long activeEvictions() {
        return activeEvictions;
    }
}
