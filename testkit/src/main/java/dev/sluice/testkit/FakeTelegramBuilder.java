package dev.sluice.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Clock;
import java.util.HashSet;
import java.util.Set;

/** Options for {@link FakeTelegram}, from {@link FakeTelegram#builder()}; {@link #start} starts it. */
public final class FakeTelegramBuilder {
    FakeTelegramLimits limits = FakeTelegramLimits.telegram();
    Clock clock = Clock.systemUTC();
    int threads = 32;
    int port = 0;
    InetAddress bindAddress = InetAddress.getLoopbackAddress();
    final Set<String> requiredTokenHashes = new HashSet<>();

    FakeTelegramBuilder() {
    }

    public FakeTelegramBuilder limits(FakeTelegramLimits limits) {
        this.limits = java.util.Objects.requireNonNull(limits, "limits");
        return this;
    }

    /** The time source for limits and {@link FakeTelegramAccepted#acceptedAtMillis()}. */
    public FakeTelegramBuilder clock(Clock clock) {
        this.clock = java.util.Objects.requireNonNull(clock, "clock");
        return this;
    }

    /** Server threads; at least the number of concurrent calls expected (senders × concurrency). */
    public FakeTelegramBuilder threads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads: must be >= 1, was " + threads);
        }
        this.threads = threads;
        return this;
    }

    /** A fixed port (0 = any free port, the default). */
    public FakeTelegramBuilder port(int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: must be 0..65535, was " + port);
        }
        this.port = port;
        return this;
    }

    /**
     * The local address to listen on; default loopback ({@code 127.0.0.1}), so a test's fake is not
     * reachable from the network. {@code 0.0.0.0} (any) lets other containers reach it, e.g. in
     * docker-compose. {@link FakeTelegram#url()} still names 127.0.0.1, which any bind address also serves.
     */
    public FakeTelegramBuilder bindAddress(InetAddress address) {
        this.bindAddress = java.util.Objects.requireNonNull(address, "bindAddress");
        return this;
    }

    /**
     * Accept only these tokens (others get 401 Unauthorized). Only a SHA-256 hash of the token is
     * kept. Without this, every well-formed token ({@code <digits>:<secret>}) is accepted.
     */
    public FakeTelegramBuilder requireToken(String token) {
        requiredTokenHashes.add(FakeTelegramHttp.sha256(token));
        return this;
    }

    /**
     * @throws IllegalStateException if the HTTP server cannot bind
     */
    public FakeTelegram start() {
        try {
            return new FakeTelegram(this);
        } catch (IOException e) {
            throw new IllegalStateException("FakeTelegram cannot bind " + bindAddress.getHostAddress() + ":" + port + ": " + e.getMessage(), e);
        }
    }
}
