package dev.sluice.app.logging;

import dev.sluice.config.SecretRedaction;
import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * An output stream that removes secrets ({@link SecretRedaction}) from each line before passing it on: the
 * last guard on a process's stdout and stderr, for whatever a library or a command prints there directly
 * (a stack trace, a client's own warning), past the logging encoder and the CLI's error handlers.
 *
 * <p>Bytes are held until a line ends ({@code \n} or {@code \r}, so progress bars still move), {@link #flush}
 * is called, or {@value #MAX_BUFFERED_BYTES} bytes are held (wrap it in a {@link PrintStream} without
 * autoflush: an autoflushing one flushes after every {@code print}, which would cut a secret in two) (a bound on memory for output without line ends;
 * a secret split across such a boundary is not recognised). Text is decoded as UTF-8. Synchronized: any thread
 * may write; a line is redacted and written whole.
 */
public final class RedactingOutputStream extends FilterOutputStream {
    /** Bytes held at most before they are redacted and written without a line end. */
    public static final int MAX_BUFFERED_BYTES = 64 * 1024;

    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);

    public RedactingOutputStream(OutputStream out) {
        super(out);
    }

    /**
     * Replaces {@code System.out} and {@code System.err} with redacting streams (UTF-8; each line is written
     * through when it ends, the rest when the stream is flushed or the JVM shuts down).
     */
    public static synchronized void installOnSystemStreams() {
        if (System.out instanceof Redacting && System.err instanceof Redacting) {
            return;
        }
        PrintStream out = System.out instanceof Redacting r ? r : new Redacting(new RedactingOutputStream(System.out));
        PrintStream err = System.err instanceof Redacting r ? r : new Redacting(new RedactingOutputStream(System.err));
        System.setOut(out);
        System.setErr(err);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            out.flush();
            err.flush();
        }, "redacting-streams-flush"));
    }

    @Override
    public synchronized void write(int b) throws IOException {
        line.write(b);
        if (b == '\n' || b == '\r' || line.size() >= MAX_BUFFERED_BYTES) {
            emit();
        }
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        for (int i = off; i < off + len; i++) {
            write(b[i]);
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        emit();
        out.flush();
    }

    @Override
    public synchronized void close() throws IOException {
        flush();
        out.close();
    }

    private void emit() throws IOException {
        if (line.size() == 0) {
            return;
        }
        String text = line.toString(StandardCharsets.UTF_8);
        line.reset();
        out.write(SecretRedaction.redact(text).getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** Marks a {@link PrintStream} already redacting, so installing twice wraps once. */
    private static final class Redacting extends PrintStream {
        Redacting(OutputStream out) {
            super(out, false, StandardCharsets.UTF_8);
        }
    }
}
