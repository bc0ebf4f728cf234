package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.config.Settings;
import dev.sluice.testkit.EmbeddedKafka;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * {@link SentMarkTtlCheck} against a real broker: the outbox topics' retention.ms and segment.ms are read by
 * describeConfigs (topic overrides here), the TTL is compared with their sum, and a sender configuration reaches the
 * broker the way {@code SenderService.start} makes it check (a daemon thread that logs).
 */
class SentMarkTtlCheckIT {
    private static final long DAY_MS = Duration.ofDays(1).toMillis();
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void broker() {
        kafka = EmbeddedKafka.start();
        kafka.createTopic("outbox.live", 1, Map.of("retention.ms", Long.toString(7 * DAY_MS), "segment.ms",
                Long.toString(7 * DAY_MS)));
        kafka.createTopic("outbox.backfill", 1, Map.of("retention.ms", Long.toString(DAY_MS), "segment.ms",
                Long.toString(DAY_MS / 24)));
    }

    @AfterAll
    static void stop() {
        kafka.close();
    }

    @Test
    void aTtlOfTheRetentionAloneIsReportedAndRetentionPlusASegmentIsNot() {
        List<String> topics = List.of("outbox.live", "outbox.backfill");
        assertThat(SentMarkTtlCheck.check(kafka.admin(), topics, Duration.ofDays(7), Duration.ofSeconds(10)))
                .hasValueSatisfying(w -> assertThat(w).contains("sender.sent.mark.ttl.ms=604800000")
                        .contains("outbox.live can hand a record out again up to retention.ms 604800000 + segment.ms "
                                + "604800000 = 1209600000 ms").doesNotContain("outbox.backfill can"));
        assertThat(SentMarkTtlCheck.check(kafka.admin(), topics, Duration.ofDays(14), Duration.ofSeconds(10))).isEmpty();
        assertThat(SentMarkTtlCheck.check(kafka.admin(), List.of("outbox.backfill"), Duration.ofHours(25),
                Duration.ofSeconds(10))).isEmpty();
    }

    @Test
    void aTopicThatCannotBeDescribedIsAWarningNotAFailure() {
        assertThat(SentMarkTtlCheck.check(kafka.admin(), List.of("no.such.topic"), Duration.ofDays(14), Duration.ofSeconds(10)))
                .hasValueSatisfying(w -> assertThat(w).contains("could not read the retention of [no.such.topic]"));
    }

    @Test
    void aSenderConfigurationChecksOnItsOwnThreadAndLogsTheWarning() {
        Logger logger = (Logger) LoggerFactory.getLogger(SentMarkTtlCheck.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            Map<String, String> m = new HashMap<>();
            m.put("bootstrap.servers", kafka.bootstrapServers());
            m.put("schema.registry.url", "http://localhost:8081");
            m.put("redis.url", "redis://localhost:6379");
            m.put("bot.alerts.token", dev.sluice.testkit.FakeTokens.of("123456789"));
            m.put("sender.sent.mark.ttl.ms", Long.toString(DAY_MS)); // below both topics' windows (14 d, 25 h)
            m.put("kafka.max.poll.records", "100"); // a consumer key: not handed to the admin client
            SentMarkTtlCheck.startAsync(new SenderConfig(Settings.of(m)));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(appender.list)
                    .anySatisfy(e -> {
                        assertThat(e.getLevel()).isEqualTo(Level.WARN);
                        assertThat(e.getFormattedMessage()).contains("sender.sent.mark.ttl.ms=86400000")
                                .contains("outbox.live can hand").contains("outbox.backfill can hand");
                    }));
        } finally {
            logger.detachAppender(appender);
        }
    }
}
