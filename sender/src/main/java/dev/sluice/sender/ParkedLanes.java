package dev.sluice.sender;

import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Lanes parked because every bot they may use had no free in-flight slot ({@code sender.max.in.flight.per.bot},
 * {@link Step.WaitForBot}), each with the time it wakes at the latest. A lane is woken early, one per call that
 * ends, when a slot of one of its bots is released ({@link #wakeOne}), and at its time otherwise
 * ({@link #wakeDue}). Parked lanes take no time of the dispatcher: nothing polls them.
 *
 * <p>Which lane a released slot wakes: the first lane holding an urgent message (a live CRITICAL) if any, else the
 * first live lane (a backfill backlog never holds live traffic back), else the first parked.
 *
 * <p>Pure and single-threaded: time is passed in by the caller, and the owner ({@link Dispatcher}) calls it only
 * with the {@link Lanes} lock held. A lane is held once however many bots it waits for; a woken or forgotten lane
 * leaves every index at once, so the size is bounded by the lanes parked now.
 *
 * @param <H> a parked lane's handle (a {@link LaneScheduler.Head})
 */
final class ParkedLanes<H> {
    private static final long NO_LIMIT = Long.MAX_VALUE;

    private static final class Parked<H> {
        final H head;
        final Set<String> bots;
        final long latestMs;
        final long seq;

        Parked(H head, Set<String> bots, long latestMs, long seq) {
            this.head = head;
            this.bots = bots;
            this.latestMs = latestMs;
            this.seq = seq;
        }
    }

    private final Predicate<? super H> urgent;
    private final Predicate<? super H> live;
    /** Per bot, in parking order: the lanes waiting for one of its slots (a lane may wait on several bots). */
    private final Map<String, LinkedHashSet<Parked<H>>> byBot = new HashMap<>();
    /** Lanes with a time limit, earliest first. */
    private final NavigableSet<Parked<H>> byTime = new TreeSet<>(
            Comparator.<Parked<H>>comparingLong(x -> x.latestMs).thenComparingLong(x -> x.seq));
    private final Map<H, Parked<H>> byHead = new HashMap<>();
    private long seq;

    /**
     * @param urgent whether a parked lane holds an urgent message (woken first)
     * @param live   whether a parked lane is a live lane (woken before backfill lanes)
     */
    ParkedLanes(Predicate<? super H> urgent, Predicate<? super H> live) {
        this.urgent = urgent;
        this.live = live;
    }

    /** Parks the lane until a slot of one of {@code bots} is released, or until {@code latestMs} (MAX_VALUE: none). */
    void park(H head, Set<String> bots, long latestMs) {
        if (bots.isEmpty()) {
            throw new IllegalArgumentException("a lane parks on at least one bot");
        }
        if (byHead.containsKey(head)) {
            throw new IllegalStateException("lane already parked");
        }
        Parked<H> parked = new Parked<>(head, Set.copyOf(bots), latestMs, seq++);
        byHead.put(head, parked);
        for (String bot : parked.bots) {
            byBot.computeIfAbsent(bot, b -> new LinkedHashSet<>()).add(parked);
        }
        if (latestMs != NO_LIMIT) {
            byTime.add(parked);
        }
    }

    /** Lanes whose time limit is at or before {@code nowMs} leave, each to {@code woken}; returns the next limit. */
    long wakeDue(long nowMs, Consumer<? super H> woken) {
        while (!byTime.isEmpty()) {
            Parked<H> first = byTime.first();
            if (first.latestMs > nowMs) {
                return first.latestMs;
            }
            remove(first);
            woken.accept(first.head);
        }
        return NO_LIMIT;
    }

    /** A slot of {@code bot} was released: the lane it wakes leaves and is returned; null when none waits for it. */
    H wakeOne(String bot) {
        LinkedHashSet<Parked<H>> queue = byBot.get(bot);
        if (queue == null) {
            return null;
        }
        Parked<H> chosen = null;
        for (Parked<H> x : queue) {
            if (urgent.test(x.head)) {
                chosen = x;
                break;
            }
            if (chosen == null && live.test(x.head)) {
                chosen = x;
            }
        }
        if (chosen == null) {
            chosen = queue.iterator().next();
        }
        remove(chosen);
        return chosen.head;
    }

    /** Parked lanes that {@code gone} selects leave without being woken (their partition was revoked). */
    void forget(Predicate<? super H> gone) {
        for (Iterator<Parked<H>> it = byHead.values().iterator(); it.hasNext(); ) {
            Parked<H> x = it.next();
            if (gone.test(x.head)) {
                it.remove();
                unindex(x);
            }
        }
    }

    /** Lanes parked now. */
    int size() {
        return byHead.size();
    }

    /** References held in the per-bot and time indexes (equals the sum of each lane's bots plus its time limit). */
    int indexEntries() {
        int n = byTime.size();
        for (LinkedHashSet<Parked<H>> queue : byBot.values()) {
            n += queue.size();
        }
        return n;
    }

    private void remove(Parked<H> x) {
        byHead.remove(x.head);
        unindex(x);
    }

    private void unindex(Parked<H> x) {
        byTime.remove(x);
        for (String bot : x.bots) {
            LinkedHashSet<Parked<H>> queue = byBot.get(bot);
            if (queue != null) {
                queue.remove(x);
                if (queue.isEmpty()) {
                    byBot.remove(bot);
                }
            }
        }
    }
}
