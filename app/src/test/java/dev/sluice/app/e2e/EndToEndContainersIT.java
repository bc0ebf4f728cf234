package dev.sluice.app.e2e;

import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The end-to-end scenario against real containers (Testcontainers): the official {@code apache/kafka} image
 * in KRaft mode, as in docker-compose.yml, and Redis. Same {@link EndToEndScenario} and size as
 * {@link EndToEndEmbeddedIT}. Without a Docker engine the class is skipped ({@code disabledWithoutDocker}).
 */
@Testcontainers(disabledWithoutDocker = true)
class EndToEndContainersIT {
    @Container
    static final KafkaContainer KAFKA = new KafkaContainer(DockerImageName.parse("apache/kafka:4.1.0"));

    @Container
    static final GenericContainer<?> REDIS = new GenericContainer<>(DockerImageName.parse("redis:7.4-alpine"))
            .withCommand("redis-server", "--save", "", "--appendonly", "no")
            .withExposedPorts(6379);

    @Test
    void threeSendersSharingRedisDeliverEveryNotificationOnceInOrderWithinTheLimit() throws Exception {
        String redisUrl = "redis://" + REDIS.getHost() + ":" + REDIS.getMappedPort(6379);
        EndToEndScenario.Outcome o = new EndToEndScenario().run(
                new EndToEndScenario.Infrastructure(KAFKA.getBootstrapServers(), redisUrl), EndToEndEmbeddedIT.SIZE);
        System.out.printf("EndToEndContainersIT: %d messages in %d ms, %.0f msg/s at the provider, max %d in any 1 s%n",
                EndToEndEmbeddedIT.SIZE.messages(), o.elapsedMs(), o.sendRatePerSecond(), o.maxPerSecond());
    }
}
