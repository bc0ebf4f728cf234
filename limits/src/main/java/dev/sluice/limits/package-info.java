/**
 * Rate-limiting algorithms as pure Java: no I/O, no threads, time passed in as epoch milliseconds or
 * read from an injected {@link java.time.Clock}.
 *
 * <ul>
 *   <li>{@link dev.sluice.limits.Gcra} / {@link dev.sluice.limits.GcraPolicy}: one {@code long} (TAT)
 *       per key, exact integer arithmetic; the topology's per-chat policy limit and the sender's
 *       local fallback.</li>
 *   <li>{@link dev.sluice.limits.TokenBucket}, {@link dev.sluice.limits.FixedWindow},
 *       {@link dev.sluice.limits.SlidingLog}, {@link dev.sluice.limits.SlidingWindowCounter}.</li>
 *   <li>{@link dev.sluice.limits.KeyedLimiter}: one limiter per key, bounded memory.</li>
 *   <li>{@link dev.sluice.limits.Evaluator} and {@link dev.sluice.limits.CapacityPlanner}: what an
 *       algorithm does to a history, and the smallest burst that loses nothing.</li>
 * </ul>
 */
package dev.sluice.limits;
