package dev.sluice.sender.budget;

import java.util.random.RandomGenerator;

/**
 * The bot gate of an unshared fallback ({@link LocalGcraBudget} as the outage fallback of N &gt; 1 replicas): no replica
 * sees the others' bot gates, and Telegram extends a penalty on every call made during it, so replicas that each probed
 * once per retry_after kept the bot's penalty running for as long as Redis stayed down (FallbackBotPenaltyIT). A
 * bot-wide penalty that continues an episode (reported for the probe that went when this replica's bot gate lifted, or
 * within the look-back after it lifted) doubles the gate: retry_after × 2^k for the k-th in a row, at most
 * {@value #MAX_DOUBLINGS} doublings (32 ×) and at most max(retry_after, 60 s), plus a uniform jitter of up to
 * min(retry_after, 60 s), so the replicas' probes drift apart and the provider sees a pause as long as its penalty. An
 * episode's first gate is the provider's retry_after, exactly; a 429 while the gate is up answers a call that was in
 * flight and changes nothing.
 *
 * <p>Stateless but for its random source (thread-safe when that is); the streak lives in the budget's per-bot state,
 * under the budget's monitor.
 */
final class UnsharedBotBackoff {
    /** The most doublings of an unshared bot gate in one penalty episode: 2^5 = 32 × retry_after. */
    static final int MAX_DOUBLINGS = 5;
    /** A doubled gate is at most max(retry_after, this), its jitter at most min(retry_after, this). */
    static final long MAX_DOUBLED_MS = 60_000;

    private final RandomGenerator jitter;

    UnsharedBotBackoff(RandomGenerator jitter) {
        this.jitter = jitter;
    }

    /** The streak after a bot-wide 429: +1 (capped) when it goes on, 0 for a new episode, unchanged while the gate is up. */
    static int streakAfter(int streak, boolean goesOn, boolean gateUp) {
        if (goesOn) {
            return Math.min(MAX_DOUBLINGS, streak + 1);
        }
        return gateUp ? streak : 0;
    }

    /** The doubled gate's length for a streak ≥ 1, ms (before the penalty cap). */
    long gateMs(long retryAfterMs, int streak) {
        return Math.min(retryAfterMs << streak, Math.max(retryAfterMs, MAX_DOUBLED_MS))
                + jitter.nextLong(Math.min(retryAfterMs, MAX_DOUBLED_MS) + 1);
    }
}
