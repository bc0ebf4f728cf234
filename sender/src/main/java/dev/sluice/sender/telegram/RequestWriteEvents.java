package dev.sluice.sender.telegram;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.EventListener;

/**
 * What the calling thread's current provider call got to, from the OkHttp events of the transport's client: whether it
 * began writing its request, whether the request was written whole, and on what connection (opened by this call, or
 * reused from the pool and idle for how long before).
 * <ul>
 * <li>A call that timed out (the whole-call bound) before its request was written cannot have reached the provider,
 * so it is retried like a connect error instead of ending UNCERTAIN. It happens when the call waits for a connection
 * longer than the call's bound, or when the process was stopped between the start of the call and its write (a long GC
 * pause, a frozen VM, SIGSTOP: the call's timer fires at once when it runs again).</li>
 * <li>A connection that ends (end of stream, reset) after the request was written whole and before any answer may have
 * carried a message the provider accepted (a load balancer dropping the answer; session 25: such messages were sent
 * five times and ended FAILED). Only a pooled connection idle for a while before the call is likely to have been closed
 * by the server before it read the request (a stale keep-alive connection): {@link #staleSuspect()}.</li>
 * </ul>
 *
 * <p>Thread confinement: a synchronous OkHttp call ({@code Call#execute}, which pengrad and {@link BotApiCall} use)
 * fires its events on the thread that executes it, and the transport classifies a failure on that same thread right
 * after the call; the per-call state is per thread, reset by each call's start. The release times of pooled
 * connections are shared by all threads (a synchronized weak map: a connection the pool evicted is forgotten with it).
 */
final class RequestWriteEvents extends EventListener {
    /**
     * A pooled connection idle at least this long before a call is taken as possibly closed by the server meanwhile:
     * under load a connection goes back to work within milliseconds, and a server's keep-alive timeout is seconds.
     */
    static final long STALE_IDLE_NANOS = 1_000_000_000L;

    /** One call's progress on one thread. Unknown (no call started on this thread) counts as written whole. */
    private static final class Progress {
        boolean startedWriting = true;
        boolean requestWritten = true;
        boolean freshConnection = true;
        long idleNanos = 0;
    }

    private static final ThreadLocal<Progress> PROGRESS = ThreadLocal.withInitial(Progress::new);
    private final Map<Connection, Long> releasedAtNanos = Collections.synchronizedMap(new WeakHashMap<>());

    @Override
    public void callStart(Call call) {
        Progress p = PROGRESS.get();
        p.startedWriting = false;
        p.requestWritten = false;
        p.freshConnection = false;
        p.idleNanos = 0;
    }

    @Override
    public void connectStart(Call call, java.net.InetSocketAddress address, java.net.Proxy proxy) {
        PROGRESS.get().freshConnection = true;
    }

    @Override
    public void connectionAcquired(Call call, Connection connection) {
        Long released = releasedAtNanos.remove(connection);
        if (released != null) {
            PROGRESS.get().idleNanos = System.nanoTime() - released;
        }
    }

    @Override
    public void connectionReleased(Call call, Connection connection) {
        releasedAtNanos.put(connection, System.nanoTime());
    }

    @Override
    public void requestHeadersStart(Call call) {
        PROGRESS.get().startedWriting = true;
    }

    @Override
    public void requestHeadersEnd(Call call, okhttp3.Request request) {
        if (request.body() == null) {
            PROGRESS.get().requestWritten = true;
        }
    }

    @Override
    public void requestBodyEnd(Call call, long byteCount) {
        PROGRESS.get().requestWritten = true;
    }

    /** Whether the last call this thread started began writing its request (its first header bytes). */
    static boolean startedWriting() {
        return PROGRESS.get().startedWriting;
    }

    /** Whether the last call this thread started wrote its request whole (headers and body). */
    static boolean requestWritten() {
        return PROGRESS.get().requestWritten;
    }

    /**
     * Whether the last call this thread started ran on a pooled connection idle at least {@link #STALE_IDLE_NANOS}
     * before it (not one it opened itself): one the server may have closed before it read the request.
     */
    static boolean staleSuspect() {
        Progress p = PROGRESS.get();
        return !p.freshConnection && p.idleNanos >= STALE_IDLE_NANOS;
    }
}
