package dev.sluice.app.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.app.SenderCommand;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.topology.TopicBootstrap;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * What {@code sluice sender}'s {@code /health/ready} says when a part it needs goes away (what
 * {@link SenderCommand#start} wires, real broker, real redis-server, FakeTelegram):
 * <ul>
 *   <li>Kafka unreachable (the broker shut down): the sender can neither consume nor write results, so it is not
 *       ready, and the body says why ({@code "kafka":"no connection to any broker"}); it stays live (its loops run and
 *       reconnect by themselves).</li>
 *   <li>Redis stopped (by its pid) with the default {@code budget.redis.outage.mode=local-fallback}: by design it stays
 *       ready, because it still sends (at its share of the rate); the body says {@code "budget_mode":"fallback_local"}.
 *       With {@code fail-closed} it would be {@code paused} and not ready ({@code SenderCommandTest}).</li>
 * </ul>
 */
class SenderReadinessOutageIT {
    private static final Duration READY_WAIT = Duration.ofSeconds(30);
    private final HttpClient http = HttpClient.newHttpClient();

    private static Settings settings(EmbeddedKafka kafka, InProcessSchemaRegistry registry, RedisInstance redis, FakeTelegram telegram) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            TopicBootstrap.ensureTopics(admin, Topics.defaults(), 2, (short) 1);
        }
        return Settings.of(Map.of(
                "bootstrap.servers", kafka.bootstrapServers(),
                "schema.registry.url", registry.url(),
                "redis.url", redis.url(),
                "telegram.api.url", telegram.apiUrl(),
                "bot.alerts.token", "42:ops-test-token",
                "budget.redis.probe.interval.ms", "500",
                "ops.port", "0",
                "ops.bind.address", "127.0.0.1"));
    }

    @Test
    void withKafkaUnreachableTheSenderIsNotReadyAndSaysWhy() throws Exception {
        AvroTrust.ensure();
        EmbeddedKafka kafka = EmbeddedKafka.start();
        try (kafka; InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             RedisInstance redis = RedisLauncher.start(); FakeTelegram telegram = FakeTelegram.start()) {
            Settings settings = settings(kafka, registry, redis, telegram);
            try (ProcessOps ops = ProcessOps.create("sender", settings, OpsConfig.SENDER_DEFAULT_PORT)) {
                SenderService service = SenderCommand.start(SenderConfig.from(settings), ops);
                try {
                    awaitReady(ops, 200);
                    assertThat(get(ops, "/health/ready").body()).contains("\"kafka\":\"connected\"");

                    kafka.close(); // the only broker: nothing to consume from or write results to

                    HttpResponse<String> notReady = awaitReady(ops, 503);
                    assertThat(notReady.body()).contains("\"kafka\":\"no connection to any broker\"", "\"consumer\":\"running\"");
                    assertThat(get(ops, "/health/live").statusCode()).as("the loops still run and reconnect").isEqualTo(200);
                } finally {
                    service.close();
                }
            }
        }
    }

    @Test
    void withRedisStoppedTheLocalFallbackSenderStillSendsAndStaysReadySayingSo() throws Exception {
        AvroTrust.ensure();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             RedisInstance redis = RedisLauncher.localProcess().launch(); FakeTelegram telegram = FakeTelegram.start()) {
            Settings settings = settings(kafka, registry, redis, telegram);
            try (ProcessOps ops = ProcessOps.create("sender", settings, OpsConfig.SENDER_DEFAULT_PORT)) {
                SenderService service = SenderCommand.start(SenderConfig.from(settings), ops);
                try {
                    awaitReady(ops, 200);
                    produce(kafka, registry, "before-outage");
                    await().atMost(READY_WAIT).until(() -> telegram.acceptedFor("7").size() == 1);

                    ProcessHandle redisServer = ProcessHandle.of(redis.pid()).orElseThrow();
                    redisServer.destroy(); // SIGTERM to the redis-server this test started, by its pid
                    redisServer.onExit().get(10, TimeUnit.SECONDS);

                    produce(kafka, registry, "during-outage");
                    await().atMost(READY_WAIT).until(() -> telegram.acceptedFor("7").size() == 2);
                    HttpResponse<String> ready = awaitReady(ops, 200);
                    assertThat(ready.body()).contains("\"budget_mode\":\"fallback_local\"", "\"kafka\":\"connected\"");
                } finally {
                    service.close();
                }
            }
        }
    }

    /** Waits (bounded) until /health/ready answers {@code status}; returns that answer. */
    private HttpResponse<String> awaitReady(ProcessOps ops, int status) {
        return await().atMost(READY_WAIT).pollInterval(Duration.ofMillis(200))
                .until(() -> get(ops, "/health/ready"), r -> r.statusCode() == status);
    }

    private static void produce(EmbeddedKafka kafka, InProcessSchemaRegistry registry, String id) {
        Instant now = Instant.now();
        OutboundMessage m = OutboundMessage.newBuilder().setId(id).setBotId("alerts").setChatId("7").setKind("test")
                .setEventClass(NotificationClass.CRITICAL).setText("msg " + id).setCreatedAt(now).setDueAt(now)
                .setExpiresAt(now.plus(Duration.ofMinutes(5))).build();
        Map<String, Object> props = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, OutboundMessage> p = new KafkaProducer<>(props, new StringSerializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), OutboundMessage.class).serializer())) {
            p.send(new ProducerRecord<>(Topics.defaults().outboxLive(), m.getChatId(), m));
            p.flush();
        }
    }

    private HttpResponse<String> get(ProcessOps ops, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.port() + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
