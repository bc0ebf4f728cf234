package dev.sluice.sender;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;

/**
 * The scheduler core: per-chat FIFO lanes and a ready queue that orders lanes by {@code readyAt}
 * (epoch milliseconds). Only the head of a lane is ever handed out, and a lane whose head is handed out
 * is "busy" (not in the ready queue) until the caller {@linkplain #complete completes} the head or
 * {@linkplain #reschedule reschedules} the lane. A lane rescheduled into the future waits alone: other
 * lanes keep flowing (no head-of-line blocking).
 *
 * <p>Pure and single-threaded: time is passed in by the caller (injectable clock), and the owner guards
 * all calls with one lock. Operations are O(log lanes).
 *
 * @param <M> the message type held in lanes
 */
public final class LaneScheduler<M> {

    /** A lane's head handed out by {@link #pollReady}; the caller returns it with complete or reschedule. */
    public static final class Head<M> {
        private final Lane<M> lane;
        private final M message;

        private Head(Lane<M> lane, M message) {
            this.lane = lane;
            this.message = message;
        }

        public LaneKey key() {
            return lane.key;
        }

        public M message() {
            return message;
        }
    }

    private static final class Lane<M> {
        final LaneKey key;
        final ArrayDeque<M> queue = new ArrayDeque<>();
        long readyAt;
        long seq;
        boolean busy;
        boolean dropped;

        Lane(LaneKey key) {
            this.key = key;
        }
    }

    private final Map<LaneKey, Lane<M>> lanes = new HashMap<>();
    private final NavigableSet<Lane<M>> ready = new TreeSet<>(
            Comparator.<Lane<M>>comparingLong(l -> l.readyAt).thenComparingLong(l -> l.seq));
    private long nextSeq;
    private int buffered;

    /** Appends a message to its chat's lane; a new lane is ready at {@code nowMs}. */
    public void add(LaneKey key, M message, long nowMs) {
        Lane<M> lane = lanes.get(key);
        if (lane == null) {
            lane = new Lane<>(key);
            lanes.put(key, lane);
            lane.queue.add(message);
            enqueue(lane, nowMs);
        } else {
            lane.queue.add(message);
        }
        buffered++;
    }

    /**
     * Hands out the head of the earliest lane whose {@code readyAt <= nowMs}, or null when none is ready.
     * The lane is busy until its head is completed or the lane rescheduled.
     */
    public Head<M> pollReady(long nowMs) {
        if (ready.isEmpty() || ready.first().readyAt > nowMs) {
            return null;
        }
        Lane<M> lane = ready.pollFirst();
        lane.busy = true;
        return new Head<>(lane, lane.queue.peekFirst());
    }

    /** The earliest {@code readyAt} of any waiting lane, or {@link Long#MAX_VALUE} when none waits. */
    public long nextReadyAtMs() {
        return ready.isEmpty() ? Long.MAX_VALUE : ready.first().readyAt;
    }

    /**
     * The head stays at the head (its message was not finished) and the lane waits until
     * {@code readyAtMs}: a budget refusal, a 429, a backoff. A no-op if the lane was dropped meanwhile.
     */
    public void reschedule(Head<M> head, long readyAtMs) {
        Lane<M> lane = checkBusy(head);
        if (lane != null) {
            lane.busy = false;
            enqueue(lane, readyAtMs);
        }
    }

    /**
     * The head's message is finished (it has its result): it leaves the lane and the next message of the
     * chat is ready at {@code nowMs}. A no-op if the lane was dropped meanwhile.
     */
    public void complete(Head<M> head, long nowMs) {
        Lane<M> lane = checkBusy(head);
        if (lane == null) {
            return;
        }
        lane.queue.pollFirst();
        buffered--;
        lane.busy = false;
        if (lane.queue.isEmpty()) {
            lanes.remove(lane.key);
        } else {
            enqueue(lane, nowMs);
        }
    }

    /**
     * Drops every lane of a partition (revoked: the new owner redelivers what has no result) and returns
     * the dropped messages, busy heads included. Completing or rescheduling a dropped head is a no-op.
     */
    public List<M> dropPartition(TopicPartition partition) {
        List<M> dropped = new ArrayList<>();
        for (Iterator<Lane<M>> it = lanes.values().iterator(); it.hasNext(); ) {
            Lane<M> lane = it.next();
            if (lane.key.partition().equals(partition)) {
                it.remove();
                if (!lane.busy) {
                    ready.remove(lane);
                }
                lane.dropped = true;
                dropped.addAll(lane.queue);
                buffered -= lane.queue.size();
                lane.queue.clear();
            }
        }
        return dropped;
    }

    /** Messages held in lanes (busy heads included). */
    public int buffered() {
        return buffered;
    }

    /** Lanes holding at least one message. */
    public int laneCount() {
        return lanes.size();
    }

    /** The deepest lane's message count, 0 when none; O(lanes), for a gauge. */
    public int maxDepth() {
        int max = 0;
        for (Lane<M> lane : lanes.values()) {
            max = Math.max(max, lane.queue.size());
        }
        return max;
    }

    /** Messages queued in one lane, 0 when it has none. */
    public int depth(LaneKey key) {
        Lane<M> lane = lanes.get(key);
        return lane == null ? 0 : lane.queue.size();
    }

    private void enqueue(Lane<M> lane, long readyAtMs) {
        lane.readyAt = readyAtMs;
        lane.seq = nextSeq++;
        ready.add(lane);
    }

    private Lane<M> checkBusy(Head<M> head) {
        Lane<M> lane = head.lane;
        if (lane.dropped) {
            return null;
        }
        if (!lane.busy) {
            throw new IllegalStateException("lane " + lane.key + " was not handed out");
        }
        return lane;
    }
}
