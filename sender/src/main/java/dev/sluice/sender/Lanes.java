package dev.sluice.sender;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.common.TopicPartition;

/**
 * The bookkeeping of the buffered messages: per-chat lanes ({@link LaneScheduler}), heads in flight (in total and
 * per partition), messages buffered per bot (the backlog), and whether the dispatcher still runs. One lock guards it
 * all, with one condition signalled on every change the dispatcher or a waiting revocation must see.
 *
 * <p>Threads: shared by the poll thread (adds, drops on revocation), the dispatch thread (hands heads out) and the
 * sending threads (settle heads); every method takes the lock (reentrant, so {@link Dispatcher} may hold it across
 * a round), and {@link #update} runs several changes under it. The status and meter threads read through it.
 */
final class Lanes {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final LaneScheduler<PendingMessage> scheduler;
    private final Map<TopicPartition, Integer> inFlightByPartition = new HashMap<>();
    /** Messages buffered per bot ({@code bot_id}), for the backlog gauge and {@code sender.status}. */
    private final Map<String, Integer> backlogByBot = new HashMap<>();
    private int inFlight;
    private boolean dispatching = true;

    Lanes(LaneScheduler<PendingMessage> scheduler) {
        this.scheduler = scheduler;
    }

    /** Runs {@code changes} under the lock, then wakes the waiting threads. */
    void update(Runnable changes) {
        lock.lock();
        try {
            changes.run();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code changes} under the lock and wakes the waiting threads only if it returns true: a change they wait for
     * was made (issue 19: a released bot slot with no lane parked on it changes nothing, and woke the dispatcher for
     * nothing after every provider call).
     */
    boolean updateIf(java.util.function.BooleanSupplier changes) {
        lock.lock();
        try {
            boolean changed = changes.getAsBoolean();
            if (changed) {
                this.changed.signalAll();
            }
            return changed;
        } finally {
            lock.unlock();
        }
    }

    /** Lock held: buffers a message in its chat's lane (ready at {@code nowMs} when the lane is new). */
    void add(PendingMessage p, long nowMs) {
        lock.lock();
        try {
            scheduler.add(p.laneKey(), p, nowMs);
            backlogByBot.merge(p.message().getBotId(), 1, Integer::sum);
        } finally {
            lock.unlock();
        }
    }

    /** Messages of {@code botId} buffered and not yet ended. */
    int backlog(String botId) {
        lock.lock();
        try {
            return backlogByBot.getOrDefault(botId, 0);
        } finally {
            lock.unlock();
        }
    }

    /** Records held in lanes (busy heads included). */
    int buffered() {
        lock.lock();
        try {
            return scheduler.buffered();
        } finally {
            lock.unlock();
        }
    }

    /** The deepest lane's message count (a gauge). */
    int maxDepth() {
        lock.lock();
        try {
            return scheduler.maxDepth();
        } finally {
            lock.unlock();
        }
    }

    /** Drops the lanes of these partitions (revoked or lost); returns how many buffered messages were dropped. */
    int dropPartitions(Set<TopicPartition> partitions) {
        lock.lock();
        try {
            int dropped = 0;
            for (TopicPartition tp : partitions) {
                List<PendingMessage> lost = scheduler.dropPartition(tp);
                dropped += lost.size();
                lost.forEach(p -> decrementBacklog(p.message().getBotId()));
            }
            return dropped;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Lock held by the dispatcher: hands out the next ready head while fewer than {@code maxInFlight} are in flight,
     * counting it in flight; null when none is ready or the bound is reached.
     */
    LaneScheduler.Head<PendingMessage> takeReady(long nowMs, int maxInFlight) {
        if (inFlight >= maxInFlight) {
            return null;
        }
        LaneScheduler.Head<PendingMessage> head = scheduler.pollReady(nowMs);
        if (head != null) {
            head.message().aheadOfUrgent(scheduler.isUrgent(head));
            inFlight++;
            inFlightByPartition.merge(head.key().partition(), 1, Integer::sum);
        }
        return head;
    }

    /**
     * Lock held by the dispatcher: hands out the next ready head of {@code botId}'s one-bot messages (lanes indexed by
     * bot, see {@link LaneScheduler#pollReadyOf}), counting it in flight even at {@code sender.max.in.flight}: it rides
     * on the budget call of a head already handed out ({@link Dispatcher#MAX_BATCH} bounds how many). Null when none.
     */
    LaneScheduler.Head<PendingMessage> takeReadyOf(String botId, long nowMs) {
        LaneScheduler.Head<PendingMessage> head = scheduler.pollReadyOf(botId, nowMs);
        if (head != null) {
            head.message().aheadOfUrgent(scheduler.isUrgent(head));
            inFlight++;
            inFlightByPartition.merge(head.key().partition(), 1, Integer::sum);
        }
        return head;
    }

    /** Lock held: when the dispatcher looks again: the earliest readyAt, unless every in-flight place is taken. */
    long nextReadyAtMs(int maxInFlight) {
        return inFlight >= maxInFlight ? Long.MAX_VALUE : scheduler.nextReadyAtMs();
    }

    /** Lock held: whether the lane of {@code head} holds an urgent message. */
    boolean isUrgent(LaneScheduler.Head<PendingMessage> head) {
        return scheduler.isUrgent(head);
    }

    /** Lock held: the head stays and its lane waits until {@code readyAtMs}. */
    void reschedule(LaneScheduler.Head<PendingMessage> head, long readyAtMs) {
        scheduler.reschedule(head, readyAtMs);
    }

    /** Lock held: the head has its result; the next message of its chat is ready at {@code nowMs}. */
    void complete(LaneScheduler.Head<PendingMessage> head, long nowMs) {
        scheduler.complete(head, nowMs);
        decrementBacklog(head.message().message().getBotId());
    }

    /** Lock held: the head's step is applied; it no longer counts in flight. Wakes the waiting threads. */
    void leftFlight(LaneScheduler.Head<PendingMessage> head) {
        inFlight--;
        inFlightByPartition.merge(head.key().partition(), -1, (a, b) -> a + b == 0 ? null : a + b);
        changed.signalAll();
    }

    private void decrementBacklog(String bot) {
        backlogByBot.merge(bot, -1, (a, b) -> a + b <= 0 ? null : a + b);
    }

    void lock() {
        lock.lock();
    }

    void unlock() {
        lock.unlock();
    }

    /** Lock held: whether the dispatcher still runs. */
    boolean dispatching() {
        return dispatching;
    }

    /** Lock held by the dispatcher: waits for a change, or until {@code untilMs} ({@link Long#MAX_VALUE}: no limit). */
    void awaitChange(long untilMs, long nowMs) throws InterruptedException {
        if (untilMs == Long.MAX_VALUE) {
            changed.await();
        } else if (untilMs > nowMs) {
            changed.await(untilMs - nowMs, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Waits until no work of these partitions is in flight, or the bound passes; false if it passed. Takes the lock
     * (held by a revocation while it waits, so nothing of the partitions is handed out meanwhile).
     */
    boolean awaitNoInFlight(Set<TopicPartition> partitions, Duration bound) {
        lock.lock();
        try {
            long deadline = System.nanoTime() + bound.toNanos();
            while (partitions.stream().anyMatch(tp -> inFlightByPartition.getOrDefault(tp, 0) > 0)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                changed.awaitNanos(left);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Stops the dispatcher and returns the partitions with work in flight now (the shutdown waits for them). */
    Set<TopicPartition> stopDispatching() {
        lock.lock();
        try {
            dispatching = false;
            changed.signalAll();
            return Set.copyOf(inFlightByPartition.keySet());
        } finally {
            lock.unlock();
        }
    }
}
