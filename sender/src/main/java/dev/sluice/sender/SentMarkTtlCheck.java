package dev.sluice.sender;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Start-up check of {@code sender.sent.mark.ttl.ms} against the outbox topics' real redelivery window, read from the
 * broker ({@code Admin.describeConfigs}). A record stays readable until its whole segment is deleted: the broker
 * deletes a segment once its newest record is older than {@code retention.ms}, and a segment is rolled at the latest
 * {@code segment.ms} after its first record, so a record can be read again up to {@code retention.ms + segment.ms}
 * after it was written (Kafka's defaults: 7 + 7 = 14 days, the TTL's default). A sent mark that expired before its
 * record did lets a replay from an early offset (lost group offsets, a new {@code sender.group.id}) send it again.
 * The check warns (it never stops the sender: the TTL is the operator's trade of memory against that replay) when the
 * TTL is shorter than that window, when a topic's retention is unbounded ({@code retention.ms=-1} or a
 * {@code cleanup.policy} without {@code delete}), and when the configs cannot be read within the timeout. Run once,
 * on a daemon thread of its own ({@link #startAsync}); it holds no state between runs.
 */
public final class SentMarkTtlCheck {
    private static final Logger log = LoggerFactory.getLogger(SentMarkTtlCheck.class);
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** A topic's deletion settings as the broker reports them (topic override or broker default). */
    record TopicWindow(String topic, long retentionMs, long segmentMs, boolean deletes) {
        /** How long after it was written a record may still be read; empty when unbounded. */
        Optional<Duration> redelivery() {
            return !deletes || retentionMs < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(retentionMs + segmentMs));
        }
    }

    private SentMarkTtlCheck() {
    }

    /** Checks on a daemon thread, so a slow broker never delays the start; the outcome is only logged. */
    public static void startAsync(SenderConfig config) {
        List<String> topics = new ArrayList<>(List.of(config.topics().outboxLive()));
        if (config.consumeBackfill()) {
            topics.add(config.topics().outboxBackfill());
        }
        Thread t = new Thread(() -> {
            try (Admin admin = Admin.create(adminProperties(config))) {
                check(admin, topics, config.sentMarkTtl(), TIMEOUT);
            } catch (RuntimeException e) {
                log.warn("sender.sent.mark.ttl.ms: could not check it against the outbox retention ({})", e.toString());
            }
        }, "sent-mark-ttl-check");
        t.setDaemon(true);
        t.start();
    }

    /** Bootstrap servers and the {@code kafka.*} settings an admin client knows (security and the like). */
    static Map<String, Object> adminProperties(SenderConfig config) {
        Map<String, Object> p = new HashMap<>();
        config.kafkaProperties().forEach((k, v) -> {
            if (AdminClientConfig.configNames().contains(k)) {
                p.put(k, v);
            }
        });
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "sluice-sender-ttl-check-" + config.instanceId());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        return p;
    }

    /**
     * Reads the topics' configs and logs a warning when the TTL is shorter than a topic's redelivery window.
     *
     * @return the warning logged, if any
     */
    public static Optional<String> check(Admin admin, Collection<String> topics, Duration ttl, Duration timeout) {
        List<TopicWindow> windows;
        try {
            windows = read(admin, topics, timeout);
        } catch (ExecutionException | TimeoutException e) {
            String w = "sender.sent.mark.ttl.ms: could not read the retention of " + topics + " within "
                    + timeout.toSeconds() + " s to check it (" + (e.getCause() != null ? e.getCause() : e) + ")";
            log.warn(w);
            return Optional.of(w);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
        Optional<String> w = problem(ttl, windows);
        w.ifPresentOrElse(log::warn, () -> log.info("sender.sent.mark.ttl.ms={} covers the outbox redelivery window {}",
                ttl.toMillis(), windows));
        return w;
    }

    static List<TopicWindow> read(Admin admin, Collection<String> topics, Duration timeout)
            throws ExecutionException, TimeoutException, InterruptedException {
        List<ConfigResource> resources = topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        Map<ConfigResource, Config> configs = admin.describeConfigs(resources).all()
                .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        List<TopicWindow> out = new ArrayList<>();
        for (ConfigResource r : resources) {
            Config c = configs.get(r);
            out.add(new TopicWindow(r.name(), longOf(c, TopicConfig.RETENTION_MS_CONFIG),
                    longOf(c, TopicConfig.SEGMENT_MS_CONFIG),
                    valueOf(c, TopicConfig.CLEANUP_POLICY_CONFIG).contains(TopicConfig.CLEANUP_POLICY_DELETE)));
        }
        return out;
    }

    /** The warning for this TTL and these topics, if the TTL is shorter than a topic's redelivery window. */
    static Optional<String> problem(Duration ttl, List<TopicWindow> windows) {
        List<String> short_ = new ArrayList<>();
        for (TopicWindow w : windows) {
            Optional<Duration> window = w.redelivery();
            if (window.isEmpty()) {
                short_.add(w.topic() + " keeps records without a time bound (retention.ms=" + w.retentionMs()
                        + (w.deletes() ? "" : ", cleanup.policy without delete") + ")");
            } else if (ttl.compareTo(window.get()) < 0) {
                short_.add(w.topic() + " can hand a record out again up to retention.ms " + w.retentionMs()
                        + " + segment.ms " + w.segmentMs() + " = " + window.get().toMillis() + " ms after it was written");
            }
        }
        if (short_.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("sender.sent.mark.ttl.ms=" + ttl.toMillis() + " is shorter than the outbox redelivery window: "
                + String.join("; ", short_) + ". A message read again after its sent mark expired (a replay from an "
                + "early offset: lost group offsets, a new sender.group.id) is sent again; set sender.sent.mark.ttl.ms "
                + ">= retention.ms + segment.ms, or shorten the outbox retention (docs/operations.md, \"Sizing the mark TTL\")");
    }

    private static String valueOf(Config c, String name) {
        ConfigEntry e = c == null ? null : c.get(name);
        return e == null || e.value() == null ? "" : e.value();
    }

    private static long longOf(Config c, String name) {
        String v = valueOf(c, name);
        return v.isEmpty() ? -1 : Long.parseLong(v.trim());
    }
}
