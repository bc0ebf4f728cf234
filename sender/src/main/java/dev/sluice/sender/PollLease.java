package dev.sluice.sender;

import java.time.Duration;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Whether this sender may still own its outbox partitions, as a lease renewed by every return of the consumer's
 * {@code poll}: a sending thread calls the provider only while it holds ({@link #held}).
 *
 * <p>Why: a sender stopped for longer than the group's session timeout (SIGSTOP, a long GC pause, a frozen VM) loses its
 * partitions to another sender, which reads them again from the committed offset and sends what has no result. When the
 * stopped sender runs again, its sending threads run too, before its poll loop has learnt of the loss: a message it was
 * granted (or had reserved a slot for) before the stop went to the provider a second time (found by trying it, 4–5
 * duplicates and per-chat order broken in each of three 70 s pauses). The group coordinator expires a member no sooner
 * than {@code session.timeout.ms} after its last heartbeat, and the heartbeat thread beats at least every
 * {@code heartbeat.interval.ms} while the process runs; so a poll that returned less than session timeout − heartbeat
 * interval − {@link #SAFETY} ago proves the member still held its partitions then. A poll that returns after the lease ran
 * out proves nothing (the first poll after a stop can return before the consumer learnt of the loss): then only an
 * offset commit the group coordinator accepted (it checks the member and its generation) renews the lease
 * ({@code OutboxPoller}). Until then sends are held back (the message waits at its lane's head, its grant passes
 * unused); with the partitions lost, the next polls drop their lanes for the new owner ({@code OutboxPoller.handBack}).
 *
 * <p>Not covered: a call already on the wire when the process stopped (the provider answers, nobody reads it until the
 * process runs again; the new owner finds its in-flight mark, no result, and sends it again, as after a kill -9; both
 * write a result); a stop between a sending thread's check and its request reaching the provider (usually microseconds,
 * at most the connect timeout); a sender cut off from the group coordinator but not from the provider (the lease
 * proves the process ran, not that its heartbeats arrived); a frozen VM whose monotonic clock did not count the
 * freeze. The session timeout is the client's ({@code group.protocol=classic}: the sender sets a client-side
 * assignor, which the {@code consumer} protocol refuses).
 *
 * <p>Thread-safe: the poll thread renews ({@link #renewIfHeld}, {@link #renewAt}), sending threads read; one volatile
 * field, one writer.
 */
final class PollLease {
    /** Taken off the lease besides the heartbeat interval: clock and scheduling slack. */
    static final Duration SAFETY = Duration.ofSeconds(2);
    private static final Duration MIN_LEASE = Duration.ofSeconds(1);

    private final long leaseNanos;
    private final LongSupplier nanoTime;
    private volatile long renewedAtNanos;

    PollLease(Duration lease) {
        this(lease, System::nanoTime);
    }

    /** @param nanoTime a monotonic clock in ns (System::nanoTime; tests pass their own) */
    PollLease(Duration lease, LongSupplier nanoTime) {
        this.leaseNanos = lease.toNanos();
        this.nanoTime = nanoTime;
        this.renewedAtNanos = nanoTime.getAsLong();
    }

    /** The lease for a consumer built from {@code consumerProps}: session timeout − heartbeat interval − SAFETY, ≥ 1 s. */
    static PollLease forConsumer(Map<String, Object> consumerProps) {
        Map<String, Object> props = new java.util.HashMap<>(consumerProps);
        // the deserializers are given to the consumer as objects: the config only needs some class to parse
        props.putIfAbsent(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.putIfAbsent(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        ConsumerConfig c = new ConsumerConfig(props);
        Duration lease = Duration.ofMillis(c.getInt(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG))
                .minusMillis(c.getInt(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG)).minus(SAFETY);
        return new PollLease(lease.compareTo(MIN_LEASE) < 0 ? MIN_LEASE : lease);
    }

    /**
     * A poll returned: renews the lease if it still held (poll thread). The time is read before the check, so a stop
     * between the two leaves the older time: the lease never covers a stop.
     *
     * @return false when the lease ran out since the last renewal: only {@link #renewAt} with a membership proof renews
     */
    boolean renewIfHeld() {
        long now = nanoTime.getAsLong();
        if (now - renewedAtNanos < leaseNanos) {
            renewedAtNanos = now;
            return true;
        }
        return false;
    }

    /** Renews as of {@code nanos} ({@link #nanoTime()}, read before the proof was asked for): the group accepted a commit. */
    void renewAt(long nanos) {
        renewedAtNanos = nanos;
    }

    /** How long since the last renewal, ms. */
    long sinceRenewalMs() {
        return (nanoTime.getAsLong() - renewedAtNanos) / 1_000_000;
    }

    /** This lease's clock, ns. */
    long nanoTime() {
        return nanoTime.getAsLong();
    }

    /** Whether the last poll returned within the lease: the partitions were still this sender's (any thread). */
    boolean held() {
        return nanoTime.getAsLong() - renewedAtNanos < leaseNanos;
    }

    Duration lease() {
        return Duration.ofNanos(leaseNanos);
    }
}
