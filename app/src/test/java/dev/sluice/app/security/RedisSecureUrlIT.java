package dev.sluice.app.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.config.Settings;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.testkit.HostBinaries;
import dev.sluice.testkit.Ports;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Issue 6, item 8: the sender's budget reaches Redis through a URL with a password ({@code requirepass}) and
 * through TLS ({@code rediss://}), on the sender's own code path ({@link RedisGcraBudget}'s constructor,
 * which is what SenderService calls with {@code redis.url}); the password is never in logs, toString or
 * exception messages.
 */
class RedisSecureUrlIT {
    private static final String PASSWORD = "r3dis-Secret-4b1d";
    private static final String WRONG = "wr0ng-Secret-77e2";
    /** Command timeout for connections expected to fail (a failed TLS handshake ends as an init timeout). */
    private static final Duration FAIL_FAST = Duration.ofMillis(500);
    private static final BudgetLimits LIMITS = new BudgetLimits(30, 1, 1, 3);

    private ListAppender<ILoggingEvent> logs;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void captureLogs() {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        logs = new ListAppender<>();
        logs.setContext(ctx);
        logs.start();
        Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(logs);
        ctx.getLogger("io.lettuce").setLevel(Level.DEBUG); // lettuce logs the URI it connects to at DEBUG
        ctx.getLogger("dev.sluice").setLevel(Level.DEBUG);
    }

    @AfterEach
    void checkLogsAndClose() throws Exception {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        ctx.getLogger(Logger.ROOT_LOGGER_NAME).detachAppender(logs);
        ctx.getLogger("io.lettuce").setLevel(null);
        ctx.getLogger("dev.sluice").setLevel(null);
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        StringBuilder all = new StringBuilder();
        for (ILoggingEvent e : logs.list) {
            all.append(e.getFormattedMessage()).append('\n');
            for (var t = e.getThrowableProxy(); t != null; t = t.getCause()) {
                all.append(t.getMessage()).append('\n');
            }
        }
        assertThat(logs.list).as("lettuce/sluice logged something at DEBUG").isNotEmpty();
        assertThat(all.toString()).doesNotContain(PASSWORD, WRONG);
    }

    @Test
    void budgetWorksThroughAPasswordUrlAndTheWrongPasswordFailsWithoutEchoingIt() {
        RedisInstance redis = RedisLauncher.withPassword(PASSWORD).launch();
        closeables.add(redis);
        String url = "redis://:" + PASSWORD + "@127.0.0.1:" + redis.port();

        try (RedisGcraBudget budget = new RedisGcraBudget(url, LIMITS, Duration.ofSeconds(2))) {
            assertThat(budget.tryAcquire("alerts", "42").granted()).isTrue();
            // A real decision from the script: global burst 1 at 30/s refuses the next one for about 33 ms.
            var refused = budget.tryAcquire("alerts", "43");
            assertThat(refused.granted()).isFalse();
            assertThat(refused.retryIn()).isBetween(Duration.ofMillis(1), Duration.ofMillis(34));
        }

        String wrongUrl = "redis://:" + WRONG + "@127.0.0.1:" + redis.port();
        assertThatThrownBy(() -> new RedisGcraBudget(wrongUrl, LIMITS, FAIL_FAST).close())
                .satisfies(e -> assertNoSecretInChain(e));
        String noPassword = "redis://127.0.0.1:" + redis.port();
        assertThatThrownBy(() -> new RedisGcraBudget(noPassword, LIMITS, FAIL_FAST).close())
                .satisfies(e -> assertNoSecretInChain(e))
                .satisfies(e -> assertThat(chain(e)).containsIgnoringCase("NOAUTH"));

        SenderConfig config = SenderConfig.from(Settings.of(Map.of("bootstrap.servers", "127.0.0.1:1",
                "schema.registry.url", "http://127.0.0.1:1", "bot.alerts.token", dev.sluice.testkit.FakeTokens.of("123456789"),
                "budget.mode", "redis", "redis.url", url)));
        assertThat(config.redisUrl()).isEqualTo(url);
        assertThat(config.toString()).contains("127.0.0.1:" + redis.port()).doesNotContain(PASSWORD);
        assertThat(RedisURI.create(url).toString()).doesNotContain(PASSWORD);
    }

    @Test
    void rediss_selectsTlsAndTheBudgetWorksOverTls(@TempDir Path dir) throws Exception {
        RedisURI parsed = RedisURI.create("rediss://:" + PASSWORD + "@redis.example:6380/0");
        assertThat(parsed.isSsl()).isTrue();
        assertThat(parsed.isVerifyPeer()).as("peer verified by default").isTrue();
        assertThat(parsed.toString()).doesNotContain(PASSWORD);

        // A real TLS redis-server (self-signed certificate) that also requires the password: the one on the
        // PATH, else the binary bundled in embedded-redis (built with TLS), as the demo finds it.
        Path openssl = HostBinaries.find("openssl").orElse(null);
        assumeTrue(openssl != null, HostBinaries.missing("openssl", "it makes this test's self-signed certificate; install the Debian package 'openssl'"));
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        run(dir, openssl.toString(), "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString(), "-out", cert.toString(),
                "-days", "1", "-subj", "/CN=127.0.0.1");
        int port = Ports.freePort();
        Process server = new ProcessBuilder(RedisLauncher.serverBinary().toString(), "--port", "0", "--tls-port", Integer.toString(port),
                "--tls-cert-file", cert.toString(), "--tls-key-file", key.toString(), "--tls-ca-cert-file", cert.toString(),
                "--tls-auth-clients", "no", "--requirepass", PASSWORD, "--save", "", "--appendonly", "no", "--dir", dir.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        closeables.add(() -> {
            server.destroy();
            server.waitFor(5, TimeUnit.SECONDS);
        });
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> accepts(port));

        // The self-signed certificate is not trusted by default: TLS really verifies the peer ...
        String verified = "rediss://:" + PASSWORD + "@127.0.0.1:" + port;
        assertThatThrownBy(() -> new RedisGcraBudget(verified, LIMITS, FAIL_FAST).close())
                .satisfies(e -> assertNoSecretInChain(e));
        // ... and with verification relaxed for this test certificate, the budget decides over TLS.
        String url = verified + "?verifyPeer=NONE";
        try (RedisGcraBudget budget = new RedisGcraBudget(url, LIMITS, Duration.ofSeconds(2))) {
            assertThat(budget.tryAcquire("alerts", "42").granted()).isTrue();
        }
        // A plain connection to the TLS port gets nowhere: the URL scheme, not luck, selected TLS above.
        String plain = "redis://:" + PASSWORD + "@127.0.0.1:" + port;
        assertThatThrownBy(() -> new RedisGcraBudget(plain, LIMITS, FAIL_FAST).close())
                .satisfies(e -> assertNoSecretInChain(e));
    }

    private static void assertNoSecretInChain(Throwable e) {
        assertThat(chain(e)).doesNotContain(PASSWORD, WRONG);
    }

    private static String chain(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            sb.append(t).append('\n');
        }
        return sb.toString();
    }

    private static boolean accepts(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void run(Path dir, String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("command.log").toFile()).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(String.join(" ", cmd) + ": " + Files.readString(dir.resolve("command.log"))).isZero();
    }
}
