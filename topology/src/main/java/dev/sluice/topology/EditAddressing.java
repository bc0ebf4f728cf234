package dev.sluice.topology;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Addresses edits and deletes (issue 20) on their way to the outbox: an OutboundMessage with {@code edit_of} or
 * {@code delete_of} leaves with {@code target_provider_message_id} set from {@code provider-message-id-store} (what
 * {@link ProviderMessageIdsProcessor} learned from the named notification's result). When that result is not known yet
 * (the original is still queued in a sender, scheduled or folding), the edit waits in {@code <lane>-edit-wait-store}, and so
 * does every later message of the lane to the same chat, so per-chat order holds; a wall-clock punctuator every
 * {@value #CHECK_INTERVAL_MS} ms, scheduled only while something waits ({@link OnDemandPunctuator}), releases what became
 * addressable. Defined ends, without a provider call (a FAILED result,
 * {@code sender_instance = topology}): the named notification ended without a message (not DELIVERED), or no result came
 * within {@code edit.wait.max.ms} ("message to edit not found" / "message to delete not found"). Messages without an edit or
 * delete pass untouched when nothing of their chat waits: the chats with waiting messages (and how many) are also kept in
 * memory, loaded from the restored store at init and changed with every write, so a message of a chat with nothing waiting,
 * and a punctuation with nothing waiting at all, read no store (issue 21).
 *
 * <p>Not a node of its own since issue 21 session 9: the lane's {@link RouteProcessor} ({@code <lane>-route}) hands it every
 * outbound message ({@link #offer}) and it gives what may leave to an {@link Out} (the route processor's outbox and results
 * sinks), saving the forwards through the nodes {@code <lane>-to-outbound}, {@code <lane>-address}, {@code <lane>-addressed}
 * and its branches. One instance per {@link RouteProcessor}, owned by the stream thread of its task.
 */
final class EditAddressing {
    /** Where addressed messages and the FAILED results of unaddressable ones go. */
    interface Out {
        void outbound(OutboundMessage m, long now);

        void failed(DeliveryResult r, long now);
    }

    /** How late an edit leaves after its original's result arrived; short, the wait store is small (bounded by the wait). */
    static final long CHECK_INTERVAL_MS = 200;
    private final LaneSpec spec;
    private final long waitMaxMs;
    private final Out out;
    private WindowStore<String, String> ids;
    private KeyValueStore<String, OutboundMessage> waiting;
    /** Chat id → number of its entries in {@link #waiting}. */
    private final Map<String, Integer> waitingPerChat = new HashMap<>();
    private long seq;
    /** The check of waiting messages, scheduled only while one waits. */
    private final OnDemandPunctuator checks = new OnDemandPunctuator(Duration.ofMillis(CHECK_INTERVAL_MS), this::releaseWaiting);

    EditAddressing(LaneSpec spec, TopologyConfig config, Out out) {
        this.spec = spec;
        this.waitMaxMs = config.editWaitMaxMs();
        this.out = out;
    }

    /** From the owning processor's {@code init}: the stores (restored) and the check's punctuator. */
    void init(ProcessorContext<?, ?> context) {
        ids = context.getStateStore(SluiceTopology.PROVIDER_MESSAGE_ID_STORE);
        waiting = context.getStateStore(SluiceTopology.editWaitStore(spec));
        try (KeyValueIterator<String, OutboundMessage> it = waiting.all()) {
            while (it.hasNext()) {
                KeyValue<String, OutboundMessage> kv = it.next();
                String key = kv.key;
                waitingPerChat.merge(kv.value.getChatId(), 1, Integer::sum);
                seq = Math.max(seq, Long.parseLong(key.substring(key.lastIndexOf('\u001f') + 1)) + 1);
            }
        }
        checks.init(context);
        if (!waitingPerChat.isEmpty()) {
            checks.ensure();
        }
    }

    /** An outbound message on its way to the outbox: leaves now (addressed, or as its FAILED result) or waits. */
    void offer(OutboundMessage m, long now) {
        if (waitingPerChat.containsKey(m.getChatId()) || !release(m, now)) {
            waiting.put(m.getChatId() + '\u001f' + String.format("%019d", seq++), m);
            waitingPerChat.merge(m.getChatId(), 1, Integer::sum);
            checks.ensure();
        }
    }

    /** Forwards {@code m} (addressed) or its FAILED result; false when it must keep waiting. */
    private boolean release(OutboundMessage m, long now) {
        String target = m.getEditOf() != null ? m.getEditOf() : m.getDeleteOf();
        if (target == null) {
            forward(m, now);
            return true;
        }
        String what = m.getEditOf() != null ? "edit" : "delete";
        String known = lookup(m.getChatId(), target);
        if (known != null && known.startsWith("D:")) {
            OutboundMessage addressed = OutboundMessage.newBuilder(m).setTargetProviderMessageId(Long.parseLong(known.substring(2))).build();
            forward(addressed, now);
            return true;
        }
        if (known != null) {
            fail(m, "message to " + what + " not found: notification " + target + " ended " + known.substring(2)
                    + " without a message in chat " + m.getChatId(), now);
            return true;
        }
        if (now - m.getDueAt().toEpochMilli() >= waitMaxMs) {
            fail(m, "message to " + what + " not found: no result of notification " + target + " in chat " + m.getChatId()
                    + " within edit.wait.max.ms (" + waitMaxMs + " ms); it is unknown, still queued, or older than"
                    + " edit.target.retention.ms", now);
            return true;
        }
        return false;
    }

    private String lookup(String chat, String id) {
        String last = null;
        try (WindowStoreIterator<String> it = ids.fetch(ProviderMessageIdsProcessor.key(chat, id), Instant.EPOCH,
                Instant.ofEpochMilli(Long.MAX_VALUE))) {
            while (it.hasNext()) {
                last = it.next().value;
            }
        }
        return last;
    }

    /** Per chat in arrival order: releases the head while it can go; a chat whose head must wait keeps the rest. */
    private void releaseWaiting(long now) {
        if (waitingPerChat.isEmpty()) {
            checks.cancel();
            return;
        }
        List<KeyValue<String, OutboundMessage>> done = new ArrayList<>();
        Set<String> blocked = new HashSet<>();
        List<KeyValue<String, OutboundMessage>> entries = new ArrayList<>();
        try (KeyValueIterator<String, OutboundMessage> it = waiting.all()) {
            it.forEachRemaining(entries::add);
        }
        for (KeyValue<String, OutboundMessage> e : entries) {
            String chat = e.value.getChatId();
            if (blocked.contains(chat)) {
                continue;
            }
            if (release(e.value, now)) {
                done.add(e);
            } else {
                blocked.add(chat);
            }
        }
        for (KeyValue<String, OutboundMessage> e : done) {
            waiting.delete(e.key);
            waitingPerChat.computeIfPresent(e.value.getChatId(), (chat, n) -> n > 1 ? n - 1 : null);
        }
        if (waitingPerChat.isEmpty()) {
            checks.cancel(); // nothing waits: no punctuation until the next message waits
        }
    }

    private void forward(OutboundMessage m, long now) {
        out.outbound(m, now);
    }

    private void fail(OutboundMessage m, String reason, long now) {
        DeliveryResult r = DeliveryResult.newBuilder()
                .setMessageId(m.getId())
                .setBotId(m.getBotId())
                .setChatId(m.getChatId())
                .setStatus(DeliveryStatus.FAILED)
                .setEventClass(m.getEventClass())
                .setLane(m.getLane())
                .setReason(reason)
                .setAttempts(0)
                .setDueAt(m.getDueAt())
                .setResultAt(Instant.ofEpochMilli(now))
                .setDigestCount(0)
                .setFoldedIds(List.of())
                .setSenderInstance(Outbound.TOPOLOGY_INSTANCE)
                .build();
        out.failed(r, now);
    }
}
