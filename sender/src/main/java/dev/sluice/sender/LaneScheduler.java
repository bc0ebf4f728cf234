package dev.sluice.sender;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;

/**
 * The scheduler core: per-chat FIFO lanes and a ready queue that orders lanes by {@code readyAt}
 * (epoch milliseconds). Only the head of a lane is ever handed out, and a lane whose head is handed out
 * is "busy" (not in the ready queue) until the caller {@linkplain #complete completes} the head or
 * {@linkplain #reschedule reschedules} the lane. A lane rescheduled into the future waits alone: other
 * lanes keep flowing (no head-of-line blocking).
 *
 * <p><b>Priority inheritance.</b> A lane that holds an <i>urgent</i> message anywhere in its queue (a live
 * CRITICAL reminder, say) is served before every other ready lane, even one that has been ready for longer.
 * Per-chat order still holds, so an urgent message queued behind routine ones lifts its whole lane: the
 * routine head goes first and the urgent message right after it. Without this, a reminder waits for every
 * routine lane that was refused by the bot's budget before it (a priority inversion behind the global limit).
 *
 * <p><b>Groups.</b> Optionally each waiting lane is also indexed by a group of its head (the head's bot):
 * {@link #pollReadyOf} hands out the earliest ready lane of one group, so the caller can decide a group's ready heads
 * together (one budget round trip for several heads of one bot) even when they are scattered among other lanes.
 *
 * <p>Pure and single-threaded: time is passed in by the caller (injectable clock), and the owner guards
 * all calls with one lock. The waiting lanes are in {@link ReadyQueue}s (FIFO buckets per millisecond of
 * {@code readyAt}; the main queues' near term in a wheel of slots): O(1) for a readyAt within about a second of the
 * waiting lanes' earliest, O(log distinct readyAt values) beyond it and in the per-group queues.
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
        /** Its place in {@code ready} or {@code urgentReady} while it waits (null while busy). */
        ReadyQueue.Entry<Lane<M>> waiting;
        /** Its place in its group's queue while it waits and is indexed (null otherwise). */
        ReadyQueue.Entry<Lane<M>> indexed;
        /** The group it was last indexed in (kept after: a chat's lane is nearly always of one bot). */
        Group<M> lastGroup;
        /** The group of the head while the lane waits (null: none, or not indexed). */
        String group;
        /** Whether the waiting head is served with the urgent lanes (set when the lane is enqueued). */
        boolean first;
        int urgentCount;
        boolean busy;
        boolean dropped;

        Lane(LaneKey key) {
            this.key = key;
        }
    }

    private final Predicate<? super M> urgent;
    private final Map<LaneKey, Lane<M>> lanes = new HashMap<>();
    /** Waiting lanes that hold an urgent message (or whose head is served first); served first. */
    private final ReadyQueue<Lane<M>> urgentReady = new ReadyQueue<>();
    /** All other waiting lanes. */
    private final ReadyQueue<Lane<M>> ready = new ReadyQueue<>();
    private int buffered;

    private final Predicate<? super M> mayAdvance;
    /** The group of a message (null: none); null when lanes are not indexed by group. */
    private final Function<? super M, String> groupOf;
    private final Predicate<? super M> servedFirst;
    /** Waiting lanes (urgent or not) by the group of their head, by {@code readyAt}; a group leaves when empty. */
    private final Map<String, Group<M>> waitingByGroup = new HashMap<>();

    /** The waiting lanes of one group; {@code registered} while it is in {@code waitingByGroup}. */
    private static final class Group<M> {
        final String name;
        /** Without a wheel: an array of slots per bot would cost memory per bot (10,000 bots: 10,000 arrays). */
        final ReadyQueue<Lane<M>> waiting = new ReadyQueue<>(0);
        boolean registered = true;

        Group(String name) {
            this.name = name;
        }
    }

    /** A scheduler where no message is urgent: lanes are served by {@code readyAt} alone. */
    public LaneScheduler() {
        this(m -> false, m -> false);
    }

    /**
     * @param urgent which messages lift their lane ahead of the others (see the class comment); evaluated
     *     once per message when it is added and when it leaves
     * @param mayAdvance whether a waiting head only waits for its turn (a pacing slot), not for a limit: when an
     *     urgent message joins its lane, such a lane becomes ready at once instead of at its turn
     */
    public LaneScheduler(Predicate<? super M> urgent, Predicate<? super M> mayAdvance) {
        this(urgent, mayAdvance, null, m -> false);
    }

    /**
     * @param groupOf the group a head belongs to ({@link #pollReadyOf}); null for a message of no group, or null
     *     to index no groups
     * @param servedFirst whether a waiting head goes with the urgent lanes (served first once ready) although its
     *     lane holds no urgent message: a head holding a reserved budget slot, which passes unused when taken late
     */
    public LaneScheduler(Predicate<? super M> urgent, Predicate<? super M> mayAdvance,
                         Function<? super M, String> groupOf, Predicate<? super M> servedFirst) {
        this.urgent = urgent;
        this.mayAdvance = mayAdvance;
        this.groupOf = groupOf;
        this.servedFirst = servedFirst;
    }

    /** Appends a message to its chat's lane; a new lane is ready at {@code nowMs}. */
    public void add(LaneKey key, M message, long nowMs) {
        boolean isUrgent = urgent.test(message);
        Lane<M> lane = lanes.get(key);
        if (lane == null) {
            lane = new Lane<>(key);
            lanes.put(key, lane);
            lane.queue.add(message);
            lane.urgentCount = isUrgent ? 1 : 0;
            enqueue(lane, nowMs);
        } else {
            lane.queue.add(message);
            if (isUrgent && lane.urgentCount++ == 0 && !lane.busy) {
                // The lane waits in the ordinary set: move it. It keeps a limit's wait (a budget refusal, a 429),
                // but not a mere turn in the pacing of routine lanes. Its place among lanes of the same readyAt is
                // where it lands (before: its first enqueueing's, a difference only among lanes of one millisecond).
                (lane.first ? urgentReady : ready).remove(lane.waiting);
                unindex(lane);
                if (lane.readyAt > nowMs && mayAdvance.test(lane.queue.peekFirst())) {
                    lane.readyAt = nowMs;
                }
                lane.waiting = urgentReady.add(lane, lane.readyAt);
                index(lane);
            }
        }
        buffered++;
    }

    /**
     * Hands out the head of a lane whose {@code readyAt <= nowMs}: the earliest urgent lane if one is ready,
     * else the earliest other lane; null when none is ready. The lane is busy until its head is completed or
     * the lane rescheduled.
     */
    public Head<M> pollReady(long nowMs) {
        ReadyQueue<Lane<M>> from = isReady(urgentReady, nowMs) ? urgentReady : isReady(ready, nowMs) ? ready : null;
        if (from == null) {
            return null;
        }
        Lane<M> lane = from.poll();
        lane.waiting = null;
        unindex(lane);
        lane.busy = true;
        return new Head<>(lane, lane.queue.peekFirst());
    }

    /**
     * Hands out the head of the earliest lane of {@code group} whose {@code readyAt <= nowMs} (urgent or not), or
     * null; as {@link #pollReady} otherwise. Always null when lanes are not indexed by group.
     */
    public Head<M> pollReadyOf(String group, long nowMs) {
        Group<M> of = waitingByGroup.get(group);
        ReadyQueue.Entry<Lane<M>> first = of == null ? null : of.waiting.peek();
        if (first == null || first.readyAtMs > nowMs) {
            return null;
        }
        Lane<M> lane = first.element;
        setOf(lane).remove(lane.waiting);
        lane.waiting = null;
        unindex(lane);
        lane.busy = true;
        return new Head<>(lane, lane.queue.peekFirst());
    }

    /** The earliest {@code readyAt} of any waiting lane, or {@link Long#MAX_VALUE} when none waits. */
    public long nextReadyAtMs() {
        return Math.min(readyAtOf(urgentReady.peek()), readyAtOf(ready.peek()));
    }

    /** True if the lane of {@code head} holds an urgent message (its head or one queued behind it). */
    public boolean isUrgent(Head<M> head) {
        return head.lane.urgentCount > 0;
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
        M done = lane.queue.pollFirst();
        if (lane.urgentCount > 0 && urgent.test(done)) {
            lane.urgentCount--;
        }
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
                    setOf(lane).remove(lane.waiting);
                    lane.waiting = null;
                    unindex(lane);
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

    private void enqueue(Lane<M> lane, long readyAtMs) {
        lane.readyAt = readyAtMs;
        lane.first = servedFirst.test(lane.queue.peekFirst());
        lane.waiting = setOf(lane).add(lane, readyAtMs);
        lane.group = groupOf == null ? null : groupOf.apply(lane.queue.peekFirst());
        index(lane);
    }

    /**
     * Adds a waiting lane to its group's set (lane.group and readyAt set). A lane served first is not indexed: its
     * head goes out on its own (a reserved slot due must not wait for a batch's budget call).
     */
    private void index(Lane<M> lane) {
        if (lane.group != null && !lane.first) {
            // the lane's last group when still registered and the same: no hash of a new bot id string per enqueue
            Group<M> g = lane.lastGroup;
            if (g == null || !g.registered || !g.name.equals(lane.group)) {
                g = waitingByGroup.computeIfAbsent(lane.group, Group::new);
                lane.lastGroup = g;
            }
            lane.indexed = g.waiting.add(lane, lane.readyAt);
        }
    }

    /** Removes a lane from its group's set before it is handed out, dropped or its readyAt changes. */
    private void unindex(Lane<M> lane) {
        if (lane.indexed == null) {
            return;
        }
        Group<M> g = lane.lastGroup;
        g.waiting.remove(lane.indexed);
        lane.indexed = null;
        if (g.waiting.isEmpty()) {
            waitingByGroup.remove(g.name);
            g.registered = false;
        }
    }

    private ReadyQueue<Lane<M>> setOf(Lane<M> lane) {
        return lane.urgentCount > 0 || lane.first ? urgentReady : ready;
    }

    private static boolean isReady(ReadyQueue<?> queue, long nowMs) {
        return readyAtOf(queue.peek()) <= nowMs;
    }

    private static long readyAtOf(ReadyQueue.Entry<?> first) {
        return first == null ? Long.MAX_VALUE : first.readyAtMs;
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
