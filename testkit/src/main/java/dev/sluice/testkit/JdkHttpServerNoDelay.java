package dev.sluice.testkit;

/**
 * Turns on TCP_NODELAY for the JDK's built-in HTTP server ({@code com.sun.net.httpserver}) in this JVM.
 *
 * <p>Why: that server writes a response's headers and body as two TCP segments and, by default, lets Nagle's
 * algorithm hold the second until the first is acknowledged; the client acknowledges late (Linux's delayed ACK,
 * about 40 ms). Some answers then take 40 ms instead of 1: measured on FakeTelegram, call round trips p99 51 ms
 * without, 9 ms with. A fake provider that answers late skews every timing measured against it.
 *
 * <p>It also bounds the time a client may take to send a request's line and headers
 * ({@code sun.net.httpserver.maxReqTime}, {@value #MAX_REQUEST_SECONDS} s; the JDK's default is no limit). The JDK
 * reads them on a worker thread, so without a bound a few clients that send "G" and stall hold every worker and
 * nothing else is answered: an ops server's {@code /health} included (reliability finding F13). The JDK's timer
 * (every second) closes such connections. Handlers that answer slowly are not affected: the bound ends when the
 * headers have arrived.
 *
 * <p>The JDK reads these properties once, when the first server of the JVM is created, so every class here that
 * creates one calls {@link #enable()} in its static initializer. A value set on the command line wins.
 */
public final class JdkHttpServerNoDelay {
    static final String PROPERTY = "sun.net.httpserver.nodelay";
    static final String MAX_REQUEST_TIME_PROPERTY = "sun.net.httpserver.maxReqTime";
    /** Seconds a client may take to send a request's line and headers before the server closes the connection. */
    public static final int MAX_REQUEST_SECONDS = 2;

    private JdkHttpServerNoDelay() {
    }

    /** Sets {@code sun.net.httpserver.nodelay=true} and {@code maxReqTime} unless they are already set. */
    public static void enable() {
        if (System.getProperty(PROPERTY) == null) {
            System.setProperty(PROPERTY, "true");
        }
        if (System.getProperty(MAX_REQUEST_TIME_PROPERTY) == null) {
            System.setProperty(MAX_REQUEST_TIME_PROPERTY, Integer.toString(MAX_REQUEST_SECONDS));
        }
    }
}
