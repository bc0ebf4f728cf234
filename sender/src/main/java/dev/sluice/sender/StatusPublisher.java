package dev.sluice.sender;

import dev.sluice.avro.SenderStatus;
import dev.sluice.metrics.SenderMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This instance's reports to the compacted {@code sender.status} (key {@code <bot>/<instance>}): per bot its backlog
 * and drain rate, read by the topology for pressure; on close a tombstone per bot (the instance left, its backlog no
 * longer counts), then the status producer is closed.
 *
 * <p>A bot whose backlog has had no grant yet (nothing granted in the last minute) is not reported until that backlog
 * is two status intervals old: a report of "backlog, drain rate 0" reads as an infinite drain time, so the topology
 * would fold the bot's routine notifications for pressure at the first message after every quiet minute (and hold them
 * until a digest flush), where the first grant comes within milliseconds. A backlog still without a grant after two
 * intervals is reported as it is: the bot is stuck (a penalty, a revoked token), and that is pressure.
 *
 * <p>Threads: {@link #publish} runs on the status timer thread ({@code sluice-sender-status-*}), as does the map of
 * backlog ages; {@link #close} on the closing thread after that timer stopped; the only other shared state is the
 * volatile "published once" flag, set from the producer's callback thread.
 */
final class StatusPublisher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StatusPublisher.class);

    private final Producer<String, SenderStatus> producer;
    private final String topic;
    private final String instanceId;
    private final Set<String> bots;
    private final ToLongFunction<String> backlog;
    private final SenderMetrics metrics;
    private final Clock clock;
    private final long graceMs;
    /** Per bot, since when its backlog has been non-empty at every report (status timer thread only). */
    private final java.util.Map<String, Long> backlogSinceMs = new java.util.HashMap<>();
    /** When the last round of reports was made (status timer thread only). */
    private long lastReportMs;
    private volatile boolean published;

    StatusPublisher(Producer<String, SenderStatus> producer, SenderConfig config, ToLongFunction<String> backlog,
                    SenderMetrics metrics, Clock clock) {
        this.producer = producer;
        this.topic = config.topics().senderStatus();
        this.instanceId = config.instanceId();
        this.bots = config.bots().keySet();
        this.backlog = backlog;
        this.metrics = metrics;
        this.clock = clock;
        this.graceMs = 2 * config.statusInterval().toMillis();
    }

    /** One report per bot; a failure is logged and the next period tries again. */
    void publish() {
        try {
            Instant now = clock.instant();
            long previousReportMs = lastReportMs;
            lastReportMs = now.toEpochMilli();
            for (String bot : bots) {
                long waiting = backlog.applyAsLong(bot);
                long nowMs = now.toEpochMilli();
                Long since = waiting > 0 ? backlogSinceMs.putIfAbsent(bot, nowMs) : backlogSinceMs.remove(bot);
                if (waiting > 0) {
                    // waiting at the last report too: the seconds since then count as draining time (a stuck
                    // backlog's rate falls); a fresh backlog only from now
                    metrics.markBusy(bot, since == null ? nowMs : previousReportMs, nowMs);
                }
                double rate = metrics.drainRate(bot);
                if (waiting > 0 && rate <= 0 && nowMs - (since == null ? nowMs : since) < graceMs) {
                    continue; // a fresh backlog, no grant yet: not reported before it is graceMs old (class comment)
                }
                SenderStatus status = SenderStatus.newBuilder().setBotId(bot).setInstanceId(instanceId)
                        .setBacklog(waiting).setDrainRatePerS(rate).setAt(now).build();
                producer.send(new ProducerRecord<>(topic, bot + "/" + instanceId, status), (md, error) -> {
                    if (error == null) {
                        published = true;
                    }
                });
            }
        } catch (RuntimeException e) {
            log.warn("sender {}: could not publish its status ({})", instanceId, e.toString());
        }
    }

    /** Withdraws this instance's reports (if one was ever written) and closes the status producer. */
    @Override
    public void close() {
        try {
            for (String bot : published ? bots : Set.<String>of()) {
                producer.send(new ProducerRecord<>(topic, bot + "/" + instanceId, null));
            }
            producer.flush();
        } catch (RuntimeException e) {
            log.warn("sender {}: could not withdraw its status ({})", instanceId, e.toString());
        }
        producer.close(Duration.ofSeconds(2));
    }
}
