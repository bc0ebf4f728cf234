package dev.sluice.sender;

import dev.sluice.avro.OutboundMessage;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks ready lane heads and hands them to the delivery side: at most {@code sender.max.in.flight} heads in flight,
 * heads of one bot in batches of up to {@link #MAX_BATCH} (one budget round trip decides a batch), pool messages one
 * by one. When a head's {@link Step} is known it settles the lane: reschedule, park ({@link ParkedLanes}) or
 * complete. A released bot slot wakes one lane parked on that bot at once ({@link #slotReleased}).
 *
 * <p>Threads: {@link #run} is the dispatch thread's loop: it holds the {@link Lanes} lock except while it waits,
 * and waits exactly until the earliest readyAt, a parked lane's time limit or a change. The work it hands out runs
 * on the sending threads ({@code senders}), which settle under the same lock; {@link ParkedLanes} is touched only
 * under it. {@link #dispatchDue} is one round, which a test drives on a manual clock with its own executor.
 */
final class Dispatcher implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
    /** Most ready heads of one bot decided by one budget round trip. */
    static final int MAX_BATCH = 16;

    private final Lanes lanes;
    private final ParkedLanes<LaneScheduler.Head<PendingMessage>> parked;
    private final DeliveryProcessor processor;
    private final BotSlots botSlots;
    private final Executor senders;
    private final Clock clock;
    private final int maxInFlight;
    private final long retryBackoffMs;
    private final String instanceId;
    /** Whether a one-bot head takes its bot's other ready heads along into its batch (reservations on). */
    private final boolean batchesBots;

    Dispatcher(Lanes lanes, DeliveryProcessor processor, BotSlots botSlots, Executor senders, Clock clock,
               SenderConfig config) {
        this.lanes = lanes;
        this.processor = processor;
        this.botSlots = botSlots;
        this.senders = senders;
        this.clock = clock;
        this.maxInFlight = config.maxInFlight();
        this.retryBackoffMs = config.retryBackoff().toMillis();
        this.instanceId = config.instanceId();
        this.batchesBots = processor.reservesSlots();
        String backfill = config.topics().outboxBackfill();
        this.parked = new ParkedLanes<>(lanes::isUrgent, h -> !h.key().partition().topic().equals(backfill));
    }

    /** The dispatch thread: rounds until the lanes stop dispatching. */
    @Override
    public void run() {
        lanes.lock();
        try {
            while (lanes.dispatching()) {
                long now = clock.millis();
                lanes.awaitChange(dispatchDue(now), now);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lanes.unlock();
        }
    }

    /**
     * One round at {@code nowMs}: parked lanes past their time limit become ready, then ready heads go to the
     * sending threads while in-flight places are free. Returns when to look again ({@link Long#MAX_VALUE}: on a
     * change only).
     */
    long dispatchDue(long nowMs) {
        lanes.lock();
        try {
            long nextParkedLimit = parked.wakeDue(nowMs, head -> lanes.reschedule(head, nowMs));
            List<LaneScheduler.Head<PendingMessage>> ready = new ArrayList<>();
            LaneScheduler.Head<PendingMessage> head;
            while ((head = lanes.takeReady(nowMs, maxInFlight)) != null) {
                ready.add(head);
                if (batchesBots && head.message().batchBot() != null && !head.message().holdsReservation()) {
                    takeAlong(head.message().message().getBotId(), nowMs, ready);
                }
            }
            hand(ready);
            return Math.min(nextParkedLimit, lanes.nextReadyAtMs(maxInFlight));
        } finally {
            lanes.unlock();
        }
    }

    /**
     * Lock held. With reservations on, the bot's other ready heads go into the batch of a head just taken, even when
     * every in-flight place is taken (up to {@link #MAX_BATCH} heads in all): one budget call reserves the bot's next
     * slots for all of them, instead of one call per head as in-flight places free one at a time. They count in
     * flight until their step is known; a head granted a later slot waits for it in its lane (as any reservation)
     * and one granted now makes its call on a sending thread like any other.
     */
    private void takeAlong(String bot, long nowMs, List<LaneScheduler.Head<PendingMessage>> ready) {
        LaneScheduler.Head<PendingMessage> more;
        for (int n = 1; n < MAX_BATCH && (more = lanes.takeReadyOf(bot, nowMs)) != null; n++) {
            ready.add(more);
        }
    }

    /**
     * A call of {@code bot} ended and its slot is back (the {@link BotSlots} listener, on a sending thread): one
     * lane parked on it becomes ready now and the dispatcher is signalled, instead of waiting for a time limit. With no
     * lane parked on the bot nothing changes and the dispatcher is not woken.
     */
    void slotReleased(String bot) {
        lanes.updateIf(() -> {
            LaneScheduler.Head<PendingMessage> woken = parked.wakeOne(bot);
            if (woken == null) {
                return false; // nothing parked on the bot: nothing for the dispatcher to see
            }
            lanes.reschedule(woken, clock.millis());
            return true;
        });
    }

    /** Revoked partitions: their parked lanes (dropped with the partition) are forgotten. */
    void forget(Set<org.apache.kafka.common.TopicPartition> partitions) {
        lanes.update(() -> parked.forget(h -> partitions.contains(h.key().partition())));
    }

    /** Lanes parked now. */
    int parkedLanes() {
        lanes.lock();
        try {
            return parked.size();
        } finally {
            lanes.unlock();
        }
    }

    /** Lock held. Ready heads of the same bot (no {@code bot_pool}) go in batches; pool messages one by one. */
    private void hand(List<LaneScheduler.Head<PendingMessage>> ready) {
        if (ready.size() == 1) {
            LaneScheduler.Head<PendingMessage> head = ready.get(0);
            if (head.message().message().getBotPool().isEmpty()) {
                senders.execute(() -> runBatch(head.message().message().getBotId(), ready));
            } else {
                senders.execute(() -> runStep(head));
            }
            return;
        }
        Map<String, List<LaneScheduler.Head<PendingMessage>>> byBot = new LinkedHashMap<>();
        for (LaneScheduler.Head<PendingMessage> head : ready) {
            OutboundMessage m = head.message().message();
            if (!m.getBotPool().isEmpty()) {
                senders.execute(() -> runStep(head));
                continue;
            }
            List<LaneScheduler.Head<PendingMessage>> batch = byBot.computeIfAbsent(m.getBotId(), b -> new ArrayList<>());
            batch.add(head);
            if (batch.size() == MAX_BATCH) {
                List<LaneScheduler.Head<PendingMessage>> full = List.copyOf(batch);
                senders.execute(() -> runBatch(m.getBotId(), full));
                batch.clear();
            }
        }
        byBot.forEach((bot, batch) -> {
            if (!batch.isEmpty()) {
                List<LaneScheduler.Head<PendingMessage>> heads = List.copyOf(batch);
                senders.execute(() -> runBatch(bot, heads));
            }
        });
    }

    /**
     * One budget decision for a batch of one bot's heads; each granted provider call runs on its own sending
     * thread (the last one on this thread), so calls of a batch overlap as they did one by one.
     */
    private void runBatch(String bot, List<LaneScheduler.Head<PendingMessage>> heads) {
        List<DeliveryProcessor.Next> next;
        try {
            List<PendingMessage> messages = new ArrayList<>(heads.size());
            heads.forEach(h -> messages.add(h.message()));
            next = processor.processBatch(bot, messages);
        } catch (RuntimeException e) {
            log.error("sender {}: processing a batch of {} messages of bot {} failed; the lanes retry in {} ms",
                    instanceId, heads.size(), bot, retryBackoffMs, e);
            long at = clock.millis() + retryBackoffMs;
            heads.forEach(h -> settle(h, new Step.RetryAt(at)));
            return;
        }
        int inline = -1;
        for (int i = 0; i < heads.size(); i++) {
            LaneScheduler.Head<PendingMessage> head = heads.get(i);
            DeliveryProcessor.Next n = next.get(i);
            if (!n.isCall()) {
                settle(head, n.run());
            } else if (inline < 0) {
                inline = i;
            } else {
                senders.execute(() -> settle(head, runGuarded(head, n)));
            }
        }
        if (inline >= 0) {
            settle(heads.get(inline), runGuarded(heads.get(inline), next.get(inline)));
        }
    }

    private Step runGuarded(LaneScheduler.Head<PendingMessage> head, DeliveryProcessor.Next n) {
        try {
            return n.run();
        } catch (RuntimeException e) {
            log.error("sender {}: processing {} failed; the lane retries in {} ms", instanceId, head.message(),
                    retryBackoffMs, e);
            return new Step.RetryAt(clock.millis() + retryBackoffMs);
        }
    }

    private void runStep(LaneScheduler.Head<PendingMessage> head) {
        Step step;
        try {
            step = processor.process(head.message());
        } catch (RuntimeException e) {
            log.error("sender {}: processing {} failed; the lane retries in {} ms", instanceId, head.message(),
                    retryBackoffMs, e);
            step = new Step.RetryAt(clock.millis() + retryBackoffMs);
        }
        settle(head, step);
    }

    /** A head's step is known: reschedule, park or complete its lane, and free its in-flight place. */
    private void settle(LaneScheduler.Head<PendingMessage> head, Step step) {
        lanes.update(() -> {
            if (step instanceof Step.RetryAt r) {
                lanes.reschedule(head, r.readyAtMs());
            } else if (step instanceof Step.WaitForBot w) {
                park(head, w.botIds(), w.latestMs());
            } else {
                lanes.complete(head, clock.millis());
            }
            lanes.leftFlight(head);
        });
    }

    /** Lock held. Parks the lane until a call of one of the bots ends (or latestMs), unless one has room already. */
    private void park(LaneScheduler.Head<PendingMessage> head, Set<String> bots, long latestMs) {
        for (String bot : bots) {
            if (botSlots.hasRoom(bot)) {
                lanes.reschedule(head, clock.millis()); // released meanwhile: ready at once
                return;
            }
        }
        parked.park(head, bots, latestMs);
    }
}
