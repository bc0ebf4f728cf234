package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class RedisLauncherIT {

    @Test
    void startsStopsAndRestartsOnTheSamePort() {
        long t0 = System.nanoTime();
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            System.out.printf("redis-server (%s) up in %d ms%n", redis.source(), (System.nanoTime() - t0) / 1_000_000);
            assertThat(redis.isManaged()).isTrue();
            assertThat(redis.url()).isEqualTo("redis://127.0.0.1:" + redis.port());
            assertThat(redis.ping()).isTrue();
            int port = redis.port();

            redis.stop();
            assertThat(redis.isRunning()).isFalse();
            assertThat(redis.ping()).as("no answer during the outage").isFalse();

            redis.restart();
            assertThat(redis.port()).isEqualTo(port);
            assertThat(redis.isRunning()).isTrue();
            assertThat(redis.ping()).isTrue();

            redis.close();
            assertThat(redis.ping()).as("closed").isFalse();
        }
    }

    @Test
    void aDataDirKeepsKeysAcrossRestartsOnAFixedPort(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws Exception {
        java.nio.file.Path dir = tmp.resolve("redis");
        int port = Ports.freePort();
        try (RedisInstance redis = RedisLauncher.localProcess().launchAt(port, dir)) {
            assertThat(redis.port()).isEqualTo(port);
            assertThat(raw(port, "*3\r\n$3\r\nSET\r\n$4\r\nkept\r\n$3\r\nyes\r\n")).isEqualTo("+OK");
        } // SIGTERM: redis-server writes its append-only file before it exits
        assertThat(dir).isDirectory();
        try (RedisInstance again = RedisLauncher.localProcess().launchAt(port, dir)) {
            assertThat(raw(port, "*2\r\n$3\r\nGET\r\n$4\r\nkept\r\n")).isEqualTo("$3");
        }
    }

    /** Sends one RESP command, returns the first reply line. */
    private static String raw(int port, String command) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2000);
            socket.getOutputStream().write(command.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\r') {
                line.append((char) c);
            }
            return line.toString();
        }
    }

    @Test
    void passwordIsRequiredAndNeverPrinted() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().password("s3cret-pw").launch()) {
            assertThat(redis.ping()).as("PING after AUTH").isTrue();
            assertThat(redis.password()).contains("s3cret-pw");
            assertThat(redis.toString()).doesNotContain("s3cret-pw");
            assertThat(redis.url()).doesNotContain("s3cret-pw");
            assertThat(rawPingWithoutAuth(redis.port())).startsWith("-NOAUTH");
        }
    }

    @Test
    void fallsBackToTheBinaryBundledInEmbeddedRedis() {
        try (RedisInstance redis = RedisLauncher.bundledBinary().launch()) {
            assertThat(redis.source()).isEqualTo(RedisInstance.Source.BUNDLED_BINARY);
            assertThat(redis.ping()).isTrue();
        }
    }

    private static String rawPingWithoutAuth(int port) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write("*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\r') {
                line.append((char) c);
            }
            return line.toString();
        }
    }
}
