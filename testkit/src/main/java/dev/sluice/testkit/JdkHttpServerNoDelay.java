package dev.sluice.testkit;

/**
 * Turns on TCP_NODELAY for the JDK's built-in HTTP server ({@code com.sun.net.httpserver}) in this JVM.
 *
 * <p>Why: that server writes a response's headers and body as two TCP segments and, by default, lets Nagle's
 * algorithm hold the second until the first is acknowledged; the client acknowledges late (Linux's delayed ACK,
 * about 40 ms). Some answers then take 40 ms instead of 1: measured on FakeTelegram, call round trips p99 51 ms
 * without, 9 ms with. A fake provider that answers late skews every timing measured against it.
 *
 * <p>The JDK reads {@code sun.net.httpserver.nodelay} once, when the first server of the JVM is created, so every
 * class here that creates one calls {@link #enable()} in its static initializer. A value set on the command line
 * wins.
 */
public final class JdkHttpServerNoDelay {
    static final String PROPERTY = "sun.net.httpserver.nodelay";

    private JdkHttpServerNoDelay() {
    }

    /** Sets {@code sun.net.httpserver.nodelay=true} unless it is already set. */
    public static void enable() {
        if (System.getProperty(PROPERTY) == null) {
            System.setProperty(PROPERTY, "true");
        }
    }
}
