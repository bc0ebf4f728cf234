package dev.sluice.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One short-lived RESP2 connection to a Redis server or Sentinel, for the testkit's own set-up work
 * (assigning cluster slots, asking a Sentinel for its master) without a client library. Replies come back
 * as {@code String} (simple and bulk strings), {@code Long}, {@code List<Object>}, or {@code null}; an error
 * reply throws {@link RespError}. Not thread-safe: one thread opens, uses and closes it.
 */
final class Resp implements AutoCloseable {
    private static final int TIMEOUT_MS = 2_000;

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private Resp(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Connects to {@code host:port} within 2 s; replies are awaited at most 2 s each. */
    static Resp connect(String host, int port) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), TIMEOUT_MS);
            socket.setSoTimeout(TIMEOUT_MS);
            return new Resp(socket);
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    /** Sends one command and reads its reply. */
    Object call(String... parts) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.writeBytes(("*" + parts.length + "\r\n").getBytes(StandardCharsets.UTF_8));
        for (String part : parts) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
            request.writeBytes(bytes);
            request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        out.write(request.toByteArray());
        out.flush();
        return read();
    }

    /** {@link #call} for a reply that is a string (simple or bulk). */
    String string(String... parts) throws IOException {
        Object reply = call(parts);
        return reply == null ? null : reply.toString();
    }

    private Object read() throws IOException {
        String line = line();
        if (line.isEmpty()) {
            throw new IOException("empty RESP reply");
        }
        String rest = line.substring(1);
        switch (line.charAt(0)) {
            case '+':
                return rest;
            case '-':
                throw new RespError(rest);
            case ':':
                return Long.parseLong(rest);
            case '$': {
                int len = Integer.parseInt(rest);
                if (len < 0) {
                    return null;
                }
                byte[] data = in.readNBytes(len);
                in.readNBytes(2); // CRLF
                return new String(data, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(rest);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(read());
                }
                return items;
            }
            default:
                throw new IOException("unexpected RESP reply: " + line);
        }
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                return sb.toString();
            }
            if (c != '\r') {
                sb.append((char) c);
            }
        }
        throw new IOException("connection closed by the server");
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** An error reply ({@code -ERR ...}). */
    static final class RespError extends IOException {
        RespError(String message) {
            super(message);
        }
    }
}
