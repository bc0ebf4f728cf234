package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Free TCP ports on the loopback interface, for servers that must be told their port up front. */
public final class Ports {

    private Ports() {
    }

    /**
     * Returns a TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
     * Another process can take it before the caller binds it, so callers that can retry on a bind
     * failure should do so.
     *
     * @throws UncheckedIOException if no socket can be bound at all
     */
    public static int freePort() {
        return freePorts(1)[0];
    }

    /**
     * Returns {@code count} distinct TCP ports on 127.0.0.1 that were free a moment ago. All are bound at once and only
     * then released: separate {@link #freePort()} calls can hand out the same port twice (the kernel may reuse a port
     * just released), which a caller that needs several ports (a broker and its controller; {@code sluice dev}'s four)
     * would see as a clash of its own.
     *
     * @throws IllegalArgumentException if {@code count < 1}
     * @throws UncheckedIOException if the sockets cannot be bound
     */
    public static int[] freePorts(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count " + count + ": expected at least 1");
        }
        ServerSocket[] sockets = new ServerSocket[count];
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                sockets[i] = new ServerSocket();
                sockets[i].setReuseAddress(false);
                sockets[i].bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                ports[i] = sockets[i].getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("no " + count + " free TCP ports on 127.0.0.1", e);
        } finally {
            for (ServerSocket socket : sockets) {
                if (socket != null) {
                    try {
                        socket.close();
                    } catch (IOException ignored) {
                        // closing a listening socket that never accepted: nothing to release beyond the port
                    }
                }
            }
        }
    }

    /**
     * A port {@code p <= 55535} such that both {@code p} and {@code p + 10000} were free a moment ago: a Redis
     * Cluster node listens on its port and on its cluster bus, 10,000 above it (Redis 6.2 cannot move the bus).
     *
     * @throws IllegalStateException if no such pair is found in 200 tries
     */
    public static int freePortWithClusterBus() {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = 20_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(35_000);
            if (isFree(port) && isFree(port + 10_000)) {
                return port;
            }
        }
        throw new IllegalStateException("no free pair of ports p and p + 10000 on 127.0.0.1");
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
