package dev.sluice.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.app.TopologyCommand;
import dev.sluice.app.ops.ProcessOps;
import dev.sluice.avro.Notification;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A non-Java client against Sluice: a Node.js producer ({@code src/test/node/registry-client/client.js}) with
 * {@code kafkajs} and {@code @kafkajs/confluent-schema-registry} in their default options registers the
 * Notification schema with the in-process registry (GET then PUT {@code /config/notifications-value}), registers
 * and resolves a schema with a reference, produces notifications keyed by chat id plus one without a chat id to
 * the embedded broker, and reads {@code delivery.results} and {@code notifications.dlq} until every
 * notification has its result. The topology, a sender, Redis and FakeTelegram run for real in this JVM.
 *
 * <p>The npm packages (exact versions, {@code package-lock.json}) are installed with {@code npm ci} into
 * {@code target/node-registry-client}. Skips, with the reason printed, only when {@code node} or {@code npm}
 * is not on the PATH; a failed install fails the test.
 */
class NodeRegistryClientIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int COUNT = 20;
    private static final Path SOURCE = Paths.get("src", "test", "node", "registry-client");
    private static final Path WORK = Paths.get("target", "node-registry-client");

    @Test
    void nodeClientWithDefaultOptionsProducesNotificationsAndReadsTheirResults() throws Exception {
        String missing = !runs("node", "--version") ? "node" : !runs("npm", "--version") ? "npm" : null;
        if (missing != null) {
            System.out.println("NodeRegistryClientIT skipped: '" + missing + "' is not on the PATH (.ci/run installs nodejs and npm)");
        }
        Assumptions.assumeTrue(missing == null, () -> "'" + missing + "' is not on the PATH");
        installClient();

        AvroTrust.ensure();
        List<AutoCloseable> closeables = new ArrayList<>();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); RedisInstance redis = RedisLauncher.start();
             InProcessSchemaRegistry registry = InProcessSchemaRegistry.start(); FakeTelegram telegram = FakeTelegram.start()) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, Topics.defaults(), 2, (short) 1);
            }
            Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
            Settings ops = Settings.of(Map.of("ops.port", "0", "ops.bind.address", "127.0.0.1"));
            try {
                ProcessOps topologyOps = ProcessOps.create("topology", ops, 0);
                closeables.add(topologyOps);
                closeables.add(TopologyCommand.start(TopologyConfig.from(common.with("application.id", "node-client-it")
                        .with("state.dir", Files.createTempDirectory("node-client-it").toString())
                        .with("commit.interval.ms", "100")), topologyOps));
                ProcessOps senderOps = ProcessOps.create("sender", ops, 0);
                closeables.add(senderOps);
                SenderService sender = new SenderService(SenderConfig.from(common
                        .with("telegram.api.url", telegram.apiUrl())
                        .with("bot.alerts.token", "123456789:node-client-it")
                        .with("budget.mode", "redis").with("redis.url", redis.url())
                        .with("sender.commit.interval.ms", "200")), senderOps.registry());
                closeables.add(sender);
                sender.start();
                HttpClient http = HttpClient.newHttpClient();
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + topologyOps.port() + "/health/ready")).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200);

                Path schemaFile = WORK.resolve("Notification.avsc");
                Files.writeString(schemaFile, Notification.getClassSchema().toString());
                Map<String, String> env = Map.of("BOOTSTRAP", kafka.bootstrapServers(), "REGISTRY_URL", registry.url(),
                        "SCHEMA_FILE", schemaFile.toAbsolutePath().toString(), "COUNT", Integer.toString(COUNT),
                        "RUN", Long.toString(System.currentTimeMillis()), "TIMEOUT_MS", "90000");
                Result node = run(List.of("node", "client.js"), env, Duration.ofSeconds(150));
                assertThat(node.exitCode).as("node client: %s%n%s", node.stdout, node.stderr).isZero();

                Map<String, List<JsonNode>> events = new HashMap<>();
                for (String line : node.stdout.split("\n")) {
                    if (line.startsWith("{")) {
                        JsonNode e = JSON.readTree(line);
                        events.computeIfAbsent(e.get("event").asText(), k -> new ArrayList<>()).add(e);
                    }
                }
                JsonNode registered = events.get("registered").get(0);
                assertThat(registered.get("again").asInt()).isEqualTo(registered.get("id").asInt());
                assertThat(registered.get("latest").asInt()).isEqualTo(registered.get("id").asInt());
                // The client's default options set the subject's compatibility on first registration.
                assertThat(http.send(HttpRequest.newBuilder(URI.create(registry.url() + "/config/notifications-value")).build(),
                        HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("{\"compatibilityLevel\":\"BACKWARD\"}");
                assertThat(events.get("reference").get(0).get("decoded_cents").asLong()).isEqualTo(1250);

                // every id ends with one result: the valid ones DELIVERED, the dead-lettered one FAILED (its id can be read)
                List<JsonNode> results = events.get("result");
                assertThat(results).hasSize(COUNT + 1);
                assertThat(results.stream().map(r -> r.get("id").asText()).distinct()).hasSize(COUNT + 1);
                assertThat(results).filteredOn(r -> r.get("id").asText().endsWith("-invalid")).singleElement()
                        .satisfies(r -> assertThat(r.get("status").asText()).isEqualTo("FAILED"));
                assertThat(results).filteredOn(r -> !r.get("id").asText().endsWith("-invalid")).hasSize(COUNT)
                        .allSatisfy(r -> assertThat(r.get("status").asText()).isEqualTo("DELIVERED"));
                JsonNode deadLetter = events.get("dead_letter").get(0);
                assertThat(deadLetter.get("reason").asText()).contains("chat_id");
                assertThat(telegram.accepted()).hasSize(COUNT);
                System.out.printf("NodeRegistryClientIT: node client registered schema %d with default options, %d results DELIVERED, "
                        + "dead letter reason '%s'%n", registered.get("id").asInt(), results.size() - 1, deadLetter.get("reason").asText());
            } finally {
                for (int i = closeables.size() - 1; i >= 0; i--) {
                    try {
                        closeables.get(i).close();
                    } catch (Exception e) {
                        // best effort: the next one still closes
                    }
                }
            }
        }
    }

    /** Copies the client into target/ and runs {@code npm ci} there unless the same lock file is installed already. */
    private static void installClient() throws Exception {
        Files.createDirectories(WORK);
        for (String f : List.of("package.json", "package-lock.json", "client.js")) {
            Files.copy(SOURCE.resolve(f), WORK.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        Path installedLock = WORK.resolve("node_modules").resolve(".package-lock.installed");
        String lock = Files.readString(SOURCE.resolve("package-lock.json"));
        if (Files.exists(installedLock) && Files.readString(installedLock).equals(lock)) {
            return;
        }
        Result install = run(List.of("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"), Map.of(), Duration.ofMinutes(5));
        assertThat(install.exitCode).as("npm ci in %s: %s%n%s", WORK, install.stdout, install.stderr).isZero();
        Files.writeString(installedLock, lock);
    }

    private static boolean runs(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static Result run(List<String> cmd, Map<String, String> env, Duration bound) throws Exception {
        Path out = Files.createTempFile(WORK.toAbsolutePath(), "out", ".txt");
        Path err = Files.createTempFile(WORK.toAbsolutePath(), "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(WORK.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(cmd + " did not finish within " + bound + ": " + Files.readString(out) + Files.readString(err));
        }
        Result r = new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
        return r;
    }

    private record Result(int exitCode, String stdout, String stderr) {
    }
}
