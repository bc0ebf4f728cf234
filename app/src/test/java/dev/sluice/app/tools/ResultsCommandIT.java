package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.TelegramBehaviour;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code sluice results} against the embedded broker, with every record written by the real processes: the
 * topology (EXPIRED results, a dead letter for a record that is not Avro) and a sender against FakeTelegram
 * (DELIVERED, and FAILED for a chat the provider does not know). Checks the text and JSON lines, the filters,
 * the summary and {@code --follow}.
 */
class ResultsCommandIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final ObjectMapper JSON = new ObjectMapper();

    private record Run(int exit, String out, String err) {
    }

    private static Run run(String[] connect, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(Arrays.asList(args));
        all.addAll(Arrays.asList(connect));
        int exit = new CommandLine(new ResultsCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute(all.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void printsWhatTheTopologyAndTheSenderDecidedWithFiltersSummaryAndFollow(@TempDir Path dir) throws Exception {
        AvroTrust.ensure();
        Topics topics = Topics.defaults();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.unlimited())) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, topics, 3, (short) 1);
            }
            telegram.enqueueForChat("123456789", "9009", TelegramBehaviour.chatNotFound(), 1);
            Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
            String[] connect = {"-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()};

            try (TopologyService topology = new TopologyService(TopologyConfig.from(common.with("application.id", "results-it")
                         .with("state.dir", dir.resolve("state").toString()).with("commit.interval.ms", "100")));
                 SenderService sender = new SenderService(SenderConfig.from(common.with("sender.instance.id", "sender-1")
                         .with("telegram.api.url", telegram.apiUrl()).with("bot.alerts.token", TOKEN)
                         .with("budget.mode", "local").with("sender.commit.interval.ms", "100")), new SimpleMeterRegistry())) {
                topology.start();
                sender.start();

                Instant future = Instant.now().plus(Duration.ofMinutes(10));
                Path file = dir.resolve("run.jsonl");
                Files.write(file, List.of(
                        line("d-1", "9001", "CRITICAL", "\"expires_at\":\"" + future + "\""),
                        line("d-2", "9002", "ROUTINE", "\"expires_at\":\"" + future + "\""),
                        line("e-1", "9003", "ROUTINE", "\"expires_at\":\"2025-07-30T00:00:00Z\""),
                        line("f-1", "9009", "CRITICAL", "\"expires_at\":\"" + future + "\"")));
                StringWriter produceErr = new StringWriter();
                int produced = new CommandLine(new ProduceCommand()).setErr(new PrintWriter(produceErr, true))
                        .execute("--file", file.toString(), "--progress", "NONE", connect[0], connect[1], connect[2], connect[3]);
                assertThat(produced).as(produceErr.toString()).isZero();
                // a producer that does not speak Avro: the topology dead-letters its record
                try (KafkaProducer<byte[], byte[]> raw = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        kafka.bootstrapServers()), new ByteArraySerializer(), new ByteArraySerializer())) {
                    raw.send(new ProducerRecord<>(topics.notifications(), "9004".getBytes(StandardCharsets.UTF_8),
                            "{\"id\":\"x\"}".getBytes(StandardCharsets.UTF_8))).get();
                }

                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                        .until(() -> run(connect, "--dlq").out().contains("results: 5 shown"));

                Run all = run(connect, "--dlq");
                assertThat(all.exit()).as(all.err()).isZero();
                List<String> lines = all.out().lines().toList();
                assertThat(lines).hasSize(6);
                assertThat(lines).anySatisfy(l -> assertThat(l).contains("DELIVERED").contains("id=d-1 chat=9001 class=CRITICAL lag_ms=")
                        .containsPattern("lag_ms=\\d+ attempts=1"));
                assertThat(lines).anySatisfy(l -> assertThat(l).contains("EXPIRED").contains("id=e-1 chat=9003").contains("reason=expires_at"));
                assertThat(lines).anySatisfy(l -> assertThat(l).contains("FAILED").contains("id=f-1 chat=9009").contains("error_code=400"));
                assertThat(lines).anySatisfy(l -> assertThat(l).contains("DEAD_LETTER").contains("id=notifications:")
                        .contains("chat=9004").contains("reason="));
                assertThat(lines.get(5)).isEqualTo("results: 5 shown (DEAD_LETTER 1, DELIVERED 2, EXPIRED 1, FAILED 1)"
                        + " from delivery.results and notifications.dlq");

                Run withoutDlq = run(connect);
                assertThat(withoutDlq.out()).doesNotContain("DEAD_LETTER").contains("results: 4 shown");

                Run json = run(connect, "--json", "--status", "delivered,failed");
                List<JsonNode> objects = new ArrayList<>();
                for (String l : json.out().lines().toList()) {
                    objects.add(JSON.readTree(l));
                }
                assertThat(objects).extracting(o -> o.get("message_id").asText()).containsExactlyInAnyOrder("d-1", "d-2", "f-1");
                JsonNode d1 = objects.stream().filter(o -> o.get("message_id").asText().equals("d-1")).findFirst().orElseThrow();
                assertThat(d1.get("status").asText()).isEqualTo("DELIVERED");
                assertThat(d1.get("chat_id").asText()).isEqualTo("9001");
                assertThat(d1.get("lag_ms").isIntegralNumber()).isTrue();
                assertThat(d1.get("sender_instance").asText()).isEqualTo("sender-1");
                assertThat(json.err()).contains("results: 3 shown (DELIVERED 2, FAILED 1)");

                Run one = run(connect, "--id", "e-1,nope");
                assertThat(one.exit()).isEqualTo(ResultsCommand.EXIT_ID_WITHOUT_RESULT);
                assertThat(one.out()).contains("id=e-1").doesNotContain("id=d-1").contains("no result (yet) for nope");
                // outside trial: an id whose result has another status was reported as having no result at all
                Run otherStatus = run(connect, "--id", "e-1", "--status", "DELIVERED");
                assertThat(otherStatus.exit()).isEqualTo(ResultsCommand.EXIT_ID_WITHOUT_RESULT);
                assertThat(otherStatus.out()).doesNotContain("id=e-1 ").doesNotContain("no result (yet)")
                        .contains("results: no DELIVERED result for e-1 (it has: EXPIRED)");

                Run badStatus = run(connect, "--status", "LOST");
                assertThat(badStatus.exit()).isEqualTo(2);
                assertThat(badStatus.err()).contains("--status LOST: not one of DELIVERED");

                Run future1 = run(connect, "--since", Instant.now().plusSeconds(3600).toString());
                assertThat(future1.out()).isEqualTo("results: 0 shown from delivery.results" + System.lineSeparator());
                assertThat(run(connect, "--since", "1h").out()).contains("results: 4 shown");
                // outside trial (session 21): an id whose result is older than --since read as "no result" without a word
                Instant window = Instant.now().plusSeconds(3600);
                Run olderThanWindow = run(connect, "--id", "e-1", "--since", window.toString());
                assertThat(olderThanWindow.exit()).isEqualTo(ResultsCommand.EXIT_ID_WITHOUT_RESULT);
                assertThat(olderThanWindow.out()).contains("results: no result (yet) for e-1 written since " + window
                        + " (older ones not read: drop --since)");

                // --follow: prints what exists, then what arrives, until --follow-seconds
                CompletableFuture<Run> following = CompletableFuture.supplyAsync(() -> run(connect, "--follow", "--follow-seconds", "20", "--id", "d-3"));
                Files.write(file, List.of(line("d-3", "9005", "CRITICAL", "\"expires_at\":\"" + future + "\"")));
                assertThat(new CommandLine(new ProduceCommand()).execute("--file", file.toString(), "--progress", "NONE",
                        connect[0], connect[1], connect[2], connect[3])).isZero();
                Run followed = following.get(40, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(followed.exit()).as(followed.err()).isZero();
                assertThat(followed.out()).contains("DELIVERED").contains("id=d-3 chat=9005").contains("results: 1 shown (DELIVERED 1)");
            }
        }
    }

    @Test
    void followEndsWithOneLineWhenTheBrokerGoesAway() throws Exception {
        AvroTrust.ensure();
        Topics topics = Topics.defaults();
        java.io.ByteArrayOutputStream systemErr = new java.io.ByteArrayOutputStream();
        java.io.PrintStream originalErr = System.err;
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        try (InProcessSchemaRegistry registry = InProcessSchemaRegistry.start()) {
            EmbeddedKafka kafka = EmbeddedKafka.start();
            CompletableFuture<Integer> following;
            try {
                kafka.createTopics(1, topics.deliveryResults());
                System.setErr(new java.io.PrintStream(systemErr, true, StandardCharsets.UTF_8));
                following = CompletableFuture.supplyAsync(() -> new CommandLine(new ResultsCommand())
                        .setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                        .execute("--follow", "-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()));
                await().atMost(Duration.ofSeconds(30)).until(() -> err.toString().contains("results: following delivery.results"));
            } finally {
                kafka.close();
            }
            long stopped = System.nanoTime();
            int exit = following.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(exit).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
            assertThat(Duration.ofNanos(System.nanoTime() - stopped)).isLessThan(RecordReader.FOLLOW_CHECK.plus(Reachability.TIMEOUT).plusSeconds(10));
            assertThat(err.toString().lines().toList()).hasSize(2).last().asString()
                    .startsWith("results: lost Kafka at " + kafka.bootstrapServers() + " (bootstrap.servers): no answer for 10 s");
            assertThat(out.toString()).isEqualTo("results: 0 shown from delivery.results" + System.lineSeparator());
        } finally {
            System.setErr(originalErr);
        }
        assertThat(systemErr.toString(StandardCharsets.UTF_8)).as("Kafka's reconnect warnings stay off the terminal").doesNotContain(" WARN ");
    }

    private static String line(String id, String chat, String eventClass, String extra) {
        return "{\"id\":\"" + id + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + chat + "\",\"kind\":\"quake\",\"event_class\":\""
                + eventClass + "\",\"text\":\"text of " + id + "\"," + extra + "}";
    }
}
