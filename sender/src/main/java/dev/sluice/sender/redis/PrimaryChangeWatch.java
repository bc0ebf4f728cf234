package dev.sluice.sender.redis;

import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.lettuce.core.resource.ClientResources;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Supplier;
import reactor.core.Disposable;

/**
 * Tells whether the Redis primary that serves a key may have changed since a caller last looked (a failover, or a
 * server that restarted): the caller compares the {@link #epochOf(byte[]) epoch} of its key with the one it saw
 * before. Asynchronous replication may have lost the primary's last writes, so a caller that keeps state there
 * (the budget's TATs) can act on it before its next decision.
 * <ul>
 *   <li>On a Redis Cluster: each {@link ClusterTopologyChangedEvent} of the session's client (Lettuce publishes one
 *       when a refresh finds another topology) advances the epoch of every slot whose primary node id changed.</li>
 *   <li>On a server or through Sentinel: each time the connection becomes active again, {@link #recheck} compares the
 *       server's {@code run_id} ({@code INFO server}) with the last one seen; a different one (a promoted replica, a
 *       restarted server) advances the single epoch.</li>
 * </ul>
 * The event subscription runs on Lettuce's event threads; the epochs are atomics, read by any thread.
 */
public final class PrimaryChangeWatch implements AutoCloseable {
    private static final int SLOTS = SlotHash.SLOT_COUNT;

    private final boolean cluster;
    private final AtomicLongArray slotEpochs = new AtomicLongArray(SLOTS);
    private final AtomicLong serverEpoch = new AtomicLong();
    private final AtomicLong changes = new AtomicLong();
    private final AtomicBoolean recheckNeeded = new AtomicBoolean();
    private volatile String runId;
    private final Disposable subscription;

    /**
     * Watches the events of {@code resources} (owned by one session) for that session's topology.
     *
     * @param initialRunId the server's run_id when the session connected (null on a cluster, or if unknown)
     */
    public PrimaryChangeWatch(ClientResources resources, boolean cluster, String initialRunId) {
        this.cluster = cluster;
        this.runId = initialRunId;
        this.subscription = resources.eventBus().get().subscribe(event -> {
            if (event instanceof ClusterTopologyChangedEvent changed) {
                onTopologyChange(changed.before(), changed.after());
            } else if (!cluster && event instanceof ConnectionActivatedEvent) {
                recheckNeeded.set(true);
            }
        });
    }

    /** Advances the epoch of each slot whose primary changed from {@code before} to {@code after}. */
    void onTopologyChange(List<RedisClusterNode> before, List<RedisClusterNode> after) {
        String[] was = primaries(before);
        String[] now = primaries(after);
        boolean any = false;
        for (int slot = 0; slot < SLOTS; slot++) {
            if (!Objects.equals(was[slot], now[slot])) {
                slotEpochs.incrementAndGet(slot);
                any = true;
            }
        }
        if (any) {
            changes.incrementAndGet();
        }
    }

    private static String[] primaries(List<RedisClusterNode> nodes) {
        String[] bySlot = new String[SLOTS];
        for (RedisClusterNode n : nodes) {
            // a failed primary still owns its slots until a replica is promoted: ownership is what counts
            if (n.is(RedisClusterNode.NodeFlag.UPSTREAM) || n.is(RedisClusterNode.NodeFlag.MASTER)) {
                n.forEachSlot(slot -> bySlot[slot] = n.getNodeId());
            }
        }
        return bySlot;
    }

    /**
     * On a server or Sentinel set, after the connection became active again: asks {@code runIdNow} (an
     * {@code INFO server} round trip) and advances the epoch if the run_id changed. Cheap otherwise (no call).
     */
    public void recheck(Supplier<String> runIdNow) {
        if (cluster || !recheckNeeded.compareAndSet(true, false)) {
            return;
        }
        String now = runIdNow.get();
        String before = runId;
        runId = now;
        if (before != null && now != null && !before.equals(now)) {
            serverEpoch.incrementAndGet();
            changes.incrementAndGet();
        }
    }

    /** Allows the next {@link #recheck} to call again (its call failed). */
    public void recheckLater() {
        recheckNeeded.set(true);
    }

    /** The epoch of the primary serving {@code key}: it grows each time that primary changed. */
    public long epochOf(byte[] key) {
        return cluster ? slotEpochs.get(SlotHash.getSlot(key)) : serverEpoch.get();
    }

    /** The epoch of the primary serving {@code key} (UTF-8). */
    public long epochOf(String key) {
        return epochOf(key.getBytes(StandardCharsets.UTF_8));
    }

    /** Primary changes seen so far (one per topology change that moved any slot, or per new run_id). */
    public long changes() {
        return changes.get();
    }

    @Override
    public void close() {
        subscription.dispose();
    }
}
