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
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free TCP port on 127.0.0.1", e);
        }
    }
}
