package dev.sluice.sender;

import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.metrics.SluiceMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads {@code outbox.live} (and {@code outbox.backfill}) into the {@link Lanes}: polls, buffers each record in its
 * chat's lane, commits offsets every {@code sender.commit.interval.ms} (per partition only up to the lowest message
 * without an acknowledged result, with the finished records above it in the metadata, see {@link OffsetTracker}),
 * hands partitions back on a rebalance, and applies backpressure: per bot first (a bot at
 * {@code sender.buffer.max.records.per.bot} has its further records deferred and read again later,
 * {@link DeferredRecords}), then globally (every partition paused above the high-water mark of buffered records plus
 * results waiting to be written, {@link PartitionPauses}). A record that cannot be read is held or dead-lettered by
 * {@link UnreadableRecords}, never skipped.
 *
 * <p>Thread: the poll thread ({@code sluice-sender-poll-*}) owns the consumer and all state here, rebalance
 * callbacks included (they run inside {@code poll}); {@link #stop} may be called from any thread.
 */
final class OutboxPoller {
    private static final Logger log = LoggerFactory.getLogger(OutboxPoller.class);
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(100);

    private final SenderConfig config;
    private final Consumer<String, OutboundMessage> consumer;
    private final Producer<?, ?> resultProducer;
    private final OffsetTracker offsets;
    private final Lanes lanes;
    private final Dispatcher dispatcher;
    private final KafkaResultSink resultSink;
    private final UnreadableRecords unreadable;
    private final SenderMetrics metrics;
    private final MeterRegistry registry;
    private final Clock clock;
    private final DeferredRecords deferred;
    private final PartitionPauses pauses;
    private final int highWater;
    private final int lowWater;
    private final Counter skipped;
    private final Map<String, Counter> deferredByBot = new HashMap<>();
    private volatile boolean running = true;
    private final PollLease lease;
    private final ThrottledWarning unconfirmed;
    private long lastCommitMs;

    OutboxPoller(SenderWiring w, Lanes lanes, Dispatcher dispatcher) {
        this.config = w.config;
        this.consumer = w.consumer;
        this.resultProducer = w.producer;
        this.offsets = w.offsets;
        this.lanes = lanes;
        this.dispatcher = dispatcher;
        this.resultSink = w.resultSink;
        this.unreadable = w.unreadable;
        this.metrics = w.metrics;
        this.registry = w.registry;
        this.clock = w.clock;
        this.lease = w.pollLease;
        this.unconfirmed = new ThrottledWarning(log, 10_000, clock::millis);
        this.highWater = config.bufferMaxRecords() - config.maxPollRecords();
        this.lowWater = highWater / 2;
        this.pauses = new PartitionPauses(highWater, lowWater);
        this.deferred = new DeferredRecords(config.bufferMaxRecordsPerBot(), config.deferredMaxRecords());
        this.skipped = Counter.builder("sluice.sender.redelivered.skipped")
                .description("Redelivered records skipped because they already had their result").register(registry);
        config.bots().keySet().forEach(bot -> deferredByBot.put(bot, deferredCounter(bot)));
    }

    private Counter deferredCounter(String bot) {
        return Counter.builder(SluiceMetrics.BACKLOG_DEFERRED).tag(SluiceMetrics.TAG_BOT, bot)
                .description("Outbox records deferred because their bot's backlog was at "
                        + "sender.buffer.max.records.per.bot (read again later)").register(registry);
    }

    /** Redelivered records skipped because they already had their result (previous owner). */
    long skippedAlreadyDone() {
        return (long) skipped.count();
    }

    /** Ends the loop: the poll returns at once (wakeup). Any thread. */
    void stop() {
        running = false;
        try {
            consumer.wakeup();
        } catch (RuntimeException e) {
            // the poll loop already ended and closed the consumer
        }
    }

    /** The poll loop; returns when stopped or when the consumer failed (logged). */
    void run() {
        List<String> topics = new ArrayList<>(List.of(config.topics().outboxLive()));
        if (config.consumeBackfill()) {
            topics.add(config.topics().outboxBackfill());
        }
        try {
            consumer.subscribe(topics, new Rebalance());
            lastCommitMs = clock.millis();
            while (running) {
                ConsumerRecords<String, OutboundMessage> records;
                try {
                    records = consumer.poll(POLL_TIMEOUT);
                } catch (RecordDeserializationException e) {
                    onUnreadable(e);
                    records = ConsumerRecords.empty();
                } catch (WakeupException e) {
                    break;
                }
                if (!records.isEmpty()) {
                    enqueue(records); // first: records just received count in the proof below (their sends wait for it)
                }
                if (!lease.renewIfHeld()) {
                    confirmMembership();
                }
                rewindDeferred();
                applyPauses();
                if (clock.millis() - lastCommitMs >= config.commitInterval().toMillis()) {
                    commit(offsets.toCommit());
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            log.error("sender {} consumer loop failed; stopping", config.instanceId(), e);
        }
    }

    /**
     * After the poll lease ran out ({@link PollLease}: a stop, a long pause): renews it only with an offset commit the
     * group coordinator accepted, which proves this member and its generation still hold the partitions. Refused
     * (another member has them, or a rebalance runs): sends stay held; the next polls hand the partitions back.
     */
    private void confirmMembership() {
        long askedAt = lease.nanoTime();
        long gapMs = lease.sinceRenewalMs();
        Set<TopicPartition> assigned = consumer.assignment();
        if (assigned.isEmpty()) {
            lease.renewAt(askedAt); // no partition: nothing of anyone's to send
            return;
        }
        try {
            Map<TopicPartition, OffsetAndMetadata> proof = offsets.toCommit();
            if (proof.isEmpty()) {
                proof = offsets.current(assigned);
            }
            if (proof.isEmpty()) {
                // nothing received since the assignment: the committed offset again, as it is (or the position)
                TopicPartition tp = assigned.iterator().next();
                OffsetAndMetadata committed = consumer.committed(Set.of(tp)).get(tp);
                proof = Map.of(tp, committed != null ? committed : new OffsetAndMetadata(consumer.position(tp)));
            }
            consumer.commitSync(proof);
            offsets.markCommitted(proof);
            lease.renewAt(askedAt);
            log.info("sender {}: still a member of its group after {} ms without a proof (a commit was accepted)",
                    config.instanceId(), gapMs);
        } catch (WakeupException e) {
            throw e;
        } catch (RuntimeException e) {
            unconfirmed.warn("sender " + config.instanceId() + ": " + gapMs + " ms since its last proof of group "
                    + "membership, not confirmed now (" + e + "): provider calls wait");
        }
    }

    private void enqueue(ConsumerRecords<String, OutboundMessage> records) {
        long now = clock.millis();
        lanes.update(() -> {
            for (ConsumerRecord<String, OutboundMessage> r : records) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                String bot = r.value() == null ? null : r.value().getBotId();
                if (deferred.handledBefore(tp, r.offset(), bot)) {
                    continue; // read again after a rewind: buffered or finished the first time
                }
                unreadable.readPast(tp, r.offset());
                offsets.received(tp, r.offset());
                if (offsets.isAlreadyDone(tp, r.offset())) {
                    offsets.done(tp, r.offset()); // the previous owner wrote its result (commit metadata)
                    skipped.increment();
                    continue;
                }
                if (r.value() == null) {
                    offsets.done(tp, r.offset()); // tombstone: nothing to send
                    continue;
                }
                int deferredBefore = deferred.size();
                if (!deferred.admit(tp, r.offset(), bot, lanes.backlog(bot))) {
                    if (deferred.size() > deferredBefore) { // deferred now, not again after a rewind
                        deferredByBot.computeIfAbsent(bot, this::deferredCounter).increment();
                    }
                    continue; // its offset stays pending: read again when the bot's backlog has room
                }
                lanes.add(new PendingMessage(tp, r.offset(), r.value()), now);
            }
        });
    }

    /**
     * A record that could not be read: read again after a rewind although it was dead-lettered the first time, it
     * is passed over; else {@link UnreadableRecords} holds or dead-letters it.
     */
    private void onUnreadable(RecordDeserializationException e) {
        if (deferred.handledBefore(e.topicPartition(), e.offset(), null)) {
            consumer.seek(e.topicPartition(), e.offset() + 1);
            return;
        }
        if (unreadable.handle(e)) {
            deferred.seen(e.topicPartition(), e.offset());
        }
    }

    /** Partitions holding deferred records of a bot whose backlog has room again are read again from there. */
    private void rewindDeferred() {
        Map<TopicPartition, Long> rewinds = deferred.rewinds(lanes::backlog);
        Set<TopicPartition> assignment = consumer.assignment();
        rewinds.forEach((tp, offset) -> {
            if (assignment.contains(tp)) {
                consumer.seek(tp, offset);
            }
        });
    }

    /**
     * Pauses exactly the partitions that must wait and resumes the others: all of them above the high-water mark
     * (until the low-water mark), those holding an unreadable record until its next read, those holding deferred
     * records while the deferred offsets are at their cap.
     */
    private void applyPauses() {
        int buffered = lanes.buffered() + resultSink.awaitingWrite();
        Set<TopicPartition> forDeferred = deferred.toPause();
        PartitionPauses.Change change = pauses.decide(consumer.assignment(), consumer.paused(), buffered,
                unreadable.held(clock.millis()), forDeferred);
        if (change.fullBegan()) {
            metrics.backpressurePaused();
            log.info("sender {}: {} records buffered (high-water {}), pausing every partition", config.instanceId(),
                    buffered, highWater);
        } else if (change.fullEnded()) {
            log.info("sender {}: {} records buffered (low-water {}), resuming", config.instanceId(), buffered, lowWater);
        }
        if (change.deferredCapBegan()) {
            metrics.backpressurePaused();
            log.info("sender {}: {} deferred records (sender.deferred.max.records), pausing {}", config.instanceId(),
                    config.deferredMaxRecords(), forDeferred);
        }
        if (!change.pause().isEmpty()) {
            consumer.pause(change.pause());
        }
        if (!change.resume().isEmpty()) {
            consumer.resume(change.resume());
        }
    }

    private void commit(Map<TopicPartition, OffsetAndMetadata> toCommit) {
        lastCommitMs = clock.millis();
        if (toCommit.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(toCommit);
            offsets.markCommitted(toCommit);
        } catch (WakeupException e) {
            consumer.commitSync(toCommit); // closing: still commit what is done
            offsets.markCommitted(toCommit);
            throw e;
        } catch (RebalanceInProgressException e) {
            log.debug("sender {}: offset commit deferred until the rebalance completes", config.instanceId());
        } catch (RuntimeException e) {
            log.warn("sender {}: offset commit failed ({}); will retry", config.instanceId(), e.toString());
        }
    }

    /** The loop ended and no work is in flight: write what is pending and commit what is done. */
    void finalCommit() {
        try {
            resultProducer.flush();
            Map<TopicPartition, OffsetAndMetadata> toCommit = offsets.toCommit();
            if (!toCommit.isEmpty()) {
                consumer.commitSync(toCommit);
                offsets.markCommitted(toCommit);
            }
        } catch (RuntimeException e) {
            log.warn("sender {}: final commit failed ({})", config.instanceId(), e.toString());
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                handBack(partitions, true);
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                handBack(partitions, false);
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            log.info("sender {}: assigned {}", config.instanceId(), partitions);
            try {
                consumer.committed(new HashSet<>(partitions)).forEach(offsets::skipAlreadyDone);
            } catch (RuntimeException e) {
                log.warn("sender {}: could not read committed metadata of {} ({}); finished records above the "
                        + "committed offset will be sent again", config.instanceId(), partitions, e.toString());
            }
        }
    }

    /**
     * Revocation: drop the partitions' lanes (the new owner redelivers what has no result), let in-flight
     * work of those partitions finish so its results are written, then commit what is done.
     */
    private void handBack(Collection<TopicPartition> partitions, boolean commit) {
        Set<TopicPartition> gone = new HashSet<>(partitions);
        int dropped = lanes.dropPartitions(gone);
        Duration bound = config.requestTimeout().plusSeconds(5);
        if (!lanes.awaitNoInFlight(gone, bound)) {
            log.warn("sender {}: in-flight sends of {} did not finish within {}", config.instanceId(), gone, bound);
        }
        lease.renewIfHeld(); // the poll thread ran all along: a long wait here must not stall the kept partitions' sends
        dispatcher.forget(gone);
        deferred.forget(gone);
        unreadable.forget(gone);
        if (commit) {
            resultProducer.flush();
            Map<TopicPartition, OffsetAndMetadata> toCommit = new HashMap<>(offsets.toCommit());
            toCommit.keySet().retainAll(gone);
            try {
                if (!toCommit.isEmpty()) {
                    consumer.commitSync(toCommit);
                    offsets.markCommitted(toCommit);
                }
            } catch (RuntimeException e) {
                log.warn("sender {}: commit on revocation failed ({})", config.instanceId(), e.toString());
            }
        }
        gone.forEach(offsets::remove);
        log.info("sender {}: handed back {} ({} buffered records dropped for redelivery)", config.instanceId(), gone,
                dropped);
    }
}
