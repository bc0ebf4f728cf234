package dev.sluice.sender.telegram;

import okhttp3.Call;
import okhttp3.EventListener;

/**
 * Whether the calling thread's current provider call began writing its request: OkHttp events of the transport's
 * client. A call that timed out (the whole-call bound) before its request was written cannot have reached the provider,
 * so it is retried like a connect error instead of ending UNCERTAIN. It happens when the call waits for a connection
 * longer than the call's bound, or when the process was stopped between the start of the call and its write (a long GC
 * pause, a frozen VM, SIGSTOP: the call's timer fires at once when it runs again).
 *
 * <p>Thread confinement: a synchronous OkHttp call ({@code Call#execute}, which pengrad and {@link BotApiCall} use)
 * fires {@code callStart} and {@code requestHeadersStart} on the thread that executes it, and the transport classifies a
 * failure on that same thread right after the call; the state is one flag per thread, reset by each call's start.
 */
final class RequestWriteEvents extends EventListener {
    /** Unknown (no call started on this thread) counts as written: UNCERTAIN, never a resend (a review). */
    private static final ThreadLocal<boolean[]> STARTED_WRITING = ThreadLocal.withInitial(() -> new boolean[] {true});

    @Override
    public void callStart(Call call) {
        STARTED_WRITING.get()[0] = false;
    }

    @Override
    public void requestHeadersStart(Call call) {
        STARTED_WRITING.get()[0] = true;
    }

    /** Whether the last call this thread started began writing its request (its first header bytes). */
    static boolean startedWriting() {
        return STARTED_WRITING.get()[0];
    }
}
