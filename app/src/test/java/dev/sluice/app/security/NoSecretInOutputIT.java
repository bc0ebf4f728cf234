package dev.sluice.app.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.app.SluiceCli;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.topology.TopicBootstrap;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * F8: every command, started as a child JVM ({@code java -cp <test classpath> dev.sluice.app.SluiceCli}) with
 * secrets planted in its config file, its environment and {@code -D}, writes none of them to stdout or stderr
 * (where its logs go), neither on a config error nor through a real start against the embedded broker, the
 * in-process registry (with basic auth), a real redis-server with a password, and FakeTelegram.
 *
 * <p>Planted: an inline PEM private key ({@code kafka.ssl.keystore.key}), a SASL JAAS config, an OAuth client
 * secret and an assertion key passphrase, a Redis password with a {@code %}, registry user info (in
 * {@code basic.auth.user.info} and in a URL), a Telegram bot token and an HTTP provider's API key.
 */
class NoSecretInOutputIT {
    private static final String PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwPlantedKeyMaterialQ1w2e3r4";
    private static final String SSL_KEY = "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "\n-----END PRIVATE KEY-----";
    private static final String SASL_PASSWORD = "saslPlanted9xq";
    private static final String SASL_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"svc\" password=\""
            + SASL_PASSWORD + "\";";
    private static final String OAUTH_SECRET = "oauthSecretPlanted3k";
    private static final String OAUTH_PASSPHRASE = "oauthPassphrasePlanted7";
    private static final String REDIS_PASSWORD = "redisPlanted%Pw8";
    private static final String REDIS_PASSWORD_MALFORMED = "pa%zzRedisPlanted";
    private static final String REGISTRY_PASSWORD = "registryPlanted5v";
    private static final String REGISTRY_URL_PASSWORD = "regUrlPlanted8m";
    private static final String BOT_TOKEN = dev.sluice.testkit.FakeTokens.of("123456789", "planted");
    private static final String API_KEY = "sk-live-Planted+/=ApiKey42";

    /** Every string that must never be printed (and its remarkable fragments). */
    private static final List<String> SECRETS = List.of(PEM_BODY, "PlantedKeyMaterial", SASL_PASSWORD, OAUTH_SECRET,
            OAUTH_PASSPHRASE, REDIS_PASSWORD, "redisPlanted%25Pw8", REDIS_PASSWORD_MALFORMED, REGISTRY_PASSWORD,
            REGISTRY_URL_PASSWORD, BOT_TOKEN, "AAHplantedTelegramToken", API_KEY, "sk-live-Planted", "sk-live-Planted%2B%2F%3DApiKey42");

    private static EmbeddedKafka kafka;
    private static InProcessSchemaRegistry registry;
    private static RedisInstance redis;
    private static FakeTelegram telegram;

    @TempDir
    Path dir;

    @BeforeAll
    static void startParts() throws Exception {
        AvroTrust.ensure();
        kafka = EmbeddedKafka.start();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            TopicBootstrap.ensureTopics(admin, Topics.defaults(), 2, (short) 1);
        }
        registry = InProcessSchemaRegistry.start().requireBasicAuth("svc", REGISTRY_PASSWORD);
        redis = RedisLauncher.withPassword(REDIS_PASSWORD).launch();
        telegram = FakeTelegram.start();
    }

    @AfterAll
    static void stopParts() {
        for (AutoCloseable c : new AutoCloseable[] {telegram, redis, registry, kafka}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    @Test
    void senderConfigErrorAndStartPrintNoSecret() throws Exception {
        // Config error: a Redis URL of the wrong scheme, with a password in it.
        Run error = run(List.of("sender", "-D", "redis.url=http://:" + REDIS_PASSWORD + "@127.0.0.1:" + redis.port()),
                out -> false, Duration.ofSeconds(60));
        assertThat(error.exitCode).isNotZero();
        assertThat(error.stderr).contains("redis.url");
        assertNoSecret(error);

        // A password with an unescaped '%': Lettuce's URISyntaxException quotes the whole URL.
        Run malformed = run(List.of("sender", "-D", "redis.url=redis://:" + REDIS_PASSWORD_MALFORMED + "@127.0.0.1:" + redis.port()),
                out -> out.contains("sluice sender: running"), Duration.ofSeconds(60));
        assertNoSecret(malformed);

        // A real start: Kafka, the registry with basic auth, Redis with its password, the provider configs.
        Run start = run(List.of("sender", "-D", "redis.url=" + redisUrl()),
                out -> out.contains("sluice sender: running"), Duration.ofSeconds(90));
        assertThat(start.stdout).contains("sluice sender: running");
        assertThat(start.stderr).contains("SenderConfig{"); // the config is logged at start, redacted
        assertNoSecret(start);
    }

    @Test
    void topologyConfigErrorAndStartPrintNoSecret() throws Exception {
        Run error = run(List.of("topology", "-D", "schema.registry.url=ftp://svc:" + REGISTRY_URL_PASSWORD + "@127.0.0.1:1"),
                out -> false, Duration.ofSeconds(60));
        assertThat(error.exitCode).isNotZero();
        assertThat(error.stderr).contains("schema.registry.url");
        assertNoSecret(error);

        Run start = run(List.of("topology", "-D", "state.dir=" + dir.resolve("state"), "-D", "application.id=secrets-it"),
                out -> out.contains("sluice topology: running"), Duration.ofSeconds(90));
        assertThat(start.stdout).contains("sluice topology: running");
        assertNoSecret(start);
    }

    @Test
    void produceConfigErrorAndRunPrintNoSecret() throws Exception {
        Path events = dir.resolve("events.jsonl");
        Files.writeString(events, "{\"id\":\"n-1\",\"bot_id\":\"alerts\",\"chat_id\":\"4711\",\"kind\":\"quake\",\"text\":\"M5.1\"}\n");
        Run error = run(List.of("produce", "--file", events.toString(), "-D",
                "schema.registry.url=http://svc:" + REGISTRY_URL_PASSWORD + "@127.0.0.1:1/x y"), out -> false, Duration.ofSeconds(60));
        assertThat(error.exitCode).isNotZero();
        assertNoSecret(error);

        Run produced = run(List.of("produce", "--file", events.toString(), "--progress", "NONE"), out -> false, Duration.ofSeconds(90));
        assertThat(produced.exitCode).as(produced.stderr).isZero();
        assertNoSecret(produced);
    }

    @Test
    void budgetStatusConfigErrorAndRunPrintNoSecret() throws Exception {
        Run error = run(List.of("budget", "status", "--key", "alerts", "--redis-url",
                "redis://:" + REDIS_PASSWORD_MALFORMED + "@127.0.0.1:" + redis.port()), out -> false, Duration.ofSeconds(60));
        assertThat(error.exitCode).isNotZero();
        assertNoSecret(error);

        Run status = run(List.of("budget", "status", "--key", "alerts", "--redis-url", redisUrl()), out -> false, Duration.ofSeconds(60));
        assertThat(status.exitCode).as(status.stderr).isZero();
        assertThat(status.stdout).contains("key alerts");
        assertNoSecret(status);
    }

    @Test
    void replayConfigErrorAndRunPrintNoSecret() throws Exception {
        Run error = run(List.of("replay", "--from", "delivery.results", "--dry-run", "-D",
                "schema.registry.url=https://svc:" + REGISTRY_URL_PASSWORD + "@"), out -> false, Duration.ofSeconds(60));
        assertThat(error.exitCode).isNotZero();
        assertNoSecret(error);

        Run dryRun = run(List.of("replay", "--from", "delivery.results", "--dry-run", "--progress", "NONE"), out -> false,
                Duration.ofSeconds(90));
        assertThat(dryRun.exitCode).as(dryRun.stderr).isZero();
        assertNoSecret(dryRun);
    }

    @Test
    void parameterErrorsPrintNoSecret() throws Exception {
        // "-D" without '=' echoes the argument; a bot token typed there is redacted by its shape.
        Run bad = run(List.of("sender", "-D", BOT_TOKEN), out -> false, Duration.ofSeconds(60));
        assertThat(bad.exitCode).isEqualTo(2);
        assertNoSecret(bad);
    }

    private static String redisUrl() {
        return "redis://:" + REDIS_PASSWORD.replace("%", "%25") + "@127.0.0.1:" + redis.port();
    }

    private void assertNoSecret(Run run) {
        for (String secret : SECRETS) {
            assertThat(run.stdout).as("stdout of %s", run.args).doesNotContain(secret);
            assertThat(run.stderr).as("stderr of %s", run.args).doesNotContain(secret);
        }
        // Checked clean above, so safe to show: what each run said (its error line, or that it ran).
        String said = (run.stderr.isBlank() ? run.stdout : run.stderr).strip().lines().filter(l -> !l.isBlank())
                .filter(l -> l.contains("sluice") || l.contains("redacted") || l.contains("error") || l.contains(":"))
                .findFirst().orElse("");
        System.out.printf("NoSecretInOutputIT %s -> exit %d, %d+%d bytes checked: %s%n", run.args, run.exitCode,
                run.stdout.length(), run.stderr.length(), said.length() > 240 ? said.substring(0, 240) + "..." : said);
    }

    /** The config file every run reads: secrets that must not break a PLAINTEXT start. */
    private Path configFile() throws IOException {
        Path file = dir.resolve("sluice.properties");
        List<String> lines = List.of(
                "bootstrap.servers=" + kafka.bootstrapServers(),
                "schema.registry.url=" + registry.url(),
                "redis.url=" + redisUrl(),
                "telegram.api.url=" + telegram.apiUrl(),
                "ops.port=0",
                "ops.bind.address=127.0.0.1",
                "kafka.sasl.oauthbearer.assertion.private.key.passphrase=" + OAUTH_PASSPHRASE,
                "provider.sms.url.template=http://127.0.0.1:9/v1/messages?to={chat}",
                "provider.sms.header.Authorization=Bearer {token}",
                "provider.sms.limit.key=ext:sms-api:test",
                "provider.sms.rate.per.s=1");
        Files.write(file, lines, StandardCharsets.UTF_8);
        return file;
    }

    private Run run(List<String> commandArgs, Predicate<String> startedWhen, Duration bound) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", System.getProperty("java.class.path"), SluiceCli.class.getName()));
        cmd.addAll(commandArgs);
        cmd.add("--config");
        cmd.add(configFile().toString());
        cmd.addAll(List.of("-D", "kafka.sasl.jaas.config=" + SASL_JAAS));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("SLUICE_"));
        Map<String, String> planted = new LinkedHashMap<>();
        planted.put("SLUICE_KAFKA_SSL_KEYSTORE_KEY", SSL_KEY);
        planted.put("SLUICE_KAFKA_SASL_OAUTHBEARER_CLIENT_CREDENTIALS_CLIENT_SECRET", OAUTH_SECRET);
        planted.put("SLUICE_BASIC_AUTH_USER_INFO", "svc:" + REGISTRY_PASSWORD);
        planted.put("SLUICE_BOT_ALERTS_TOKEN", BOT_TOKEN);
        planted.put("SLUICE_BOT_SMS_TOKEN", API_KEY);
        env.putAll(planted);
        Path stdout = dir.resolve("stdout-" + System.nanoTime() + ".txt");
        Path stderr = dir.resolve("stderr-" + System.nanoTime() + ".txt");
        Process p = pb.redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
        long deadline = System.nanoTime() + bound.toNanos();
        boolean started = false;
        boolean timedOut = false;
        while (p.isAlive() && System.nanoTime() < deadline) {
            if (startedWhen.test(Files.readString(stdout))) {
                started = true;
                break;
            }
            p.waitFor(100, TimeUnit.MILLISECONDS);
        }
        if (p.isAlive()) {
            timedOut = !started;
            // Started (or still trying): stop it the way an operator does, so its shutdown logs are checked too.
            p.destroy();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        Run run = new Run(commandArgs, started || timedOut ? -1 : p.exitValue(), Files.readString(stdout), Files.readString(stderr));
        assertThat(timedOut).as("%s neither started nor ended within %s: %s", commandArgs, bound, run.stderr).isFalse();
        return run;
    }

    private record Run(List<String> args, int exitCode, String stdout, String stderr) {
    }
}
