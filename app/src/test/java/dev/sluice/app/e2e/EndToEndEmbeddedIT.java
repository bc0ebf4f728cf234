package dev.sluice.app.e2e;

import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The end-to-end scenario on the embedded KRaft broker and a redis-server process: the twin of
 * {@link EndToEndContainersIT}, running the same {@link EndToEndScenario} where no Docker engine exists.
 * Scaled: 600 messages to 60 chats; provider 150 msg/s per bot and 5 msg/s per chat.
 */
class EndToEndEmbeddedIT {
    static final EndToEndScenario.Size SIZE = new EndToEndScenario.Size(600, 60, 150, 5.0, Duration.ofSeconds(90));

    @Test
    void threeSendersSharingRedisDeliverEveryNotificationOnceInOrderWithinTheLimit() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); RedisInstance redis = RedisLauncher.start()) {
            EndToEndScenario.Outcome o = new EndToEndScenario().run(
                    new EndToEndScenario.Infrastructure(kafka.bootstrapServers(), redis.url()), SIZE);
            System.out.printf("EndToEndEmbeddedIT: %d messages in %d ms, %.0f msg/s at the provider, max %d in any 1 s (limit %d)%n",
                    SIZE.messages(), o.elapsedMs(), o.sendRatePerSecond(), o.maxPerSecond(), SIZE.providerPerSecond());
        }
    }
}
