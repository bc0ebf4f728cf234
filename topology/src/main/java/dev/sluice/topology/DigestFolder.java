package dev.sluice.topology;

import dev.sluice.avro.ChatStatus;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.DigestEntry;
import dev.sluice.avro.FoldedMeta;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.topology.TopologyCounters.DigestTrigger;
import dev.sluice.topology.TopologyCounters.FoldReason;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Folding and the digests' leaving for one lane's {@link RouteProcessor} ({@code <lane>-route}), which decides what
 * folds and runs {@link #flush} on its punctuator.
 *
 * <p>Folding puts the notification in {@code <lane>-digest-store} (key {@link DigestKey}, through
 * {@link PendingDigests}). Digests leave on a wall-clock punctuator every {@code digest.flush.interval.ms} (a digest to
 * a chat with a policy limit only when its GCRA allows one more message; else it waits for a later flush), all at once
 * when {@code digest.max.keys} entries are pending, and an entry when it holds {@code digest.max.folded.ids} ids (with
 * the entries of its chat and bot that leave before it); so every folded id is in exactly one digest. A chat's digests
 * leave in the order of their latest folds ({@link PendingDigests#inLeavingOrder}): a digest shows its latest
 * notification, so it goes after everything its chat had folded before that one (its earlier notifications are summed
 * up in it); a later routine notification of the chat is processed after the flush and lands behind them in the same
 * outbox partition. Per (chat, bot) order holds; a migrated chat's digests pending under its old id are not waited for
 * (they go to the old id's partition, with no order to the new one's).
 *
 * <p>Deadlines: an entry keeps each folded notification's {@code expires_at} ({@code folded}). Whenever an entry leaves,
 * the ids already past their deadline leave it first, each as its own EXPIRED result ({@code sender_instance=topology},
 * the shape of the route's), and are neither counted, listed nor dated in the digest; if the entry's latest notification
 * (whose text, keyboard and media the digest shows) is among them, the ids it superseded expire with it (their reason
 * names its deadline), so no digest shows the state of a notification past its deadline. The digest carries the earliest
 * {@code expires_at} of the ids it still holds ({@link Outbound#digest}): no folded notification reaches the provider
 * after its own deadline, at the price that the ids with a later one end EXPIRED with the digest when the sender cannot
 * send it in time (one result, their {@code folded_ids}). So that a deadline shorter than {@code digest.flush.interval.ms}
 * is not simply expired, {@link #leaveBeforeDeadlines} (the route's deadline check) sends an entry early once its
 * earliest deadline is {@code digest.deadline.lead.ms} away, and ends at their deadline the entries that can no longer go.
 *
 * <p>A digest leaves through {@link EditAddressing} (to {@code <lane>-outbox-sink}); one to a chat that became inactive
 * while it was pending leaves as one SKIPPED_INACTIVE result on {@code <lane>-results-sink}.
 *
 * <p>One instance per {@link RouteProcessor#init} (Kafka Streams may init a processor again when it revives its task;
 * the count of digests the schedule opened carries over, {@link #releasedOpened()}); its state and the stores it
 * writes belong to the task's stream thread.
 */
final class DigestFolder {
    private final ProcessorContext<String, SpecificRecord> context;
    private final LaneSpec spec;
    private final TopologyConfig config;
    private final TopologyCounters counters;
    private final PendingDigests digests;
    private final PolicyTats policy;
    private final ChatStatusKeys.Task chats;
    private final KeyValueStore<String, ChatStatus> chatStatus;
    private final EditAddressing address;
    private final String resultsSink;
    /** Digests opened by the schedule's punctuator in this processor instance ({@link #newDigestId}). */
    private long releasedOpened;

    DigestFolder(ProcessorContext<String, SpecificRecord> context, LaneSpec spec, TopologyConfig config,
                 TopologyCounters counters, PendingDigests digests, PolicyTats policy, ChatStatusKeys.Task chats,
                 KeyValueStore<String, ChatStatus> chatStatus, EditAddressing address, String resultsSink,
                 long releasedOpened) {
        this.context = context;
        this.spec = spec;
        this.config = config;
        this.counters = counters;
        this.digests = digests;
        this.policy = policy;
        this.chats = chats;
        this.chatStatus = chatStatus;
        this.address = address;
        this.resultsSink = resultsSink;
        this.releasedOpened = releasedOpened;
    }

    /**
     * Folds {@code n} (addressed to its chat after any migration) into the entry of {@code key}: {@code pending}, or a
     * new one when null. A full entry leaves at once; reaching {@code digest.max.keys} flushes every entry.
     *
     * @param released whether the schedule's punctuator released {@code n} (see {@link #newDigestId})
     */
    void fold(String key, DigestEntry pending, Notification n, NotificationClass eventClass, FoldReason reason, long now,
              boolean released) {
        DigestEntry e = pending;
        if (e == null) {
            e = DigestEntry.newBuilder().setBotId(n.getBotId()).setChatId(n.getChatId()).setKind(n.getKind())
                    .setEntity(n.getEntity()).setEventClass(eventClass).setCount(0).setFirstAt(n.getCreatedAt())
                    .setLastAt(n.getCreatedAt()).setFoldedAt(Instant.ofEpochMilli(now)).setLatest(n)
                    .setFoldedIds(new ArrayList<>()).setDigestId(newDigestId(now, released)).build();
        }
        List<FoldedMeta> folded = new ArrayList<>(Outbound.folded(e));
        List<String> ids = new ArrayList<>(e.getFoldedIds());
        ids.add(n.getId());
        folded.add(Outbound.foldedMeta(n, eventClass));
        e.setFoldedIds(ids);
        e.setFolded(folded);
        e.setCount(ids.size());
        e.setEventClass(eventClass);
        e.setLatest(n);
        e.setFoldSeq(digests.nextFoldSeq()); // it now leaves after every entry of its chat folded into before this one
        if (n.getCreatedAt().isAfter(e.getLastAt())) {
            e.setLastAt(n.getCreatedAt());
        }
        if (n.getCreatedAt().isBefore(e.getFirstAt())) {
            e.setFirstAt(n.getCreatedAt());
        }
        counters.folded(spec.lane(), eventClass, reason);
        if (ids.size() >= config.digestMaxFoldedIds()) {
            // Full: it leaves now as its own digest, so the id list stays bounded and every id is in one digest; the
            // entries of its chat and bot that leave before it go first (policy or not), so it does not overtake them.
            digests.delete(key);
            for (KeyValue<String, DigestEntry> older : digests.removeLeavingBefore(key, e)) {
                emitDigest(older.value, now, DigestTrigger.MAX_FOLDED_IDS);
            }
            emitDigest(e, now, DigestTrigger.MAX_FOLDED_IDS);
        } else {
            digests.put(key, e);
        }
        if (digests.size() >= config.digestMaxKeys()) {
            flush(now, true);
        }
    }

    /**
     * The id of a digest opened now: {@code <lane>-digest-<partition>-<offset>-<now>} from the repartition record
     * that opens it (the same when a task is retried under exactly-once, unique per partition and offset),
     * {@code <lane>-digest-<partition>-d<offset>-<now>} from a record of the direct path (the lane's input topic, whose
     * offsets are another sequence: without the {@code d} a record of each at one offset and instant opened two chats'
     * digests under one id, which the sender would take for a reused id), or
     * {@code <lane>-digest-<partition>-r<n>-<now>} when the schedule's punctuator opens it (n counts such openings
     * in this instance). Never derived from a folded id, so a repeated id cannot make two digests collide (F4).
     */
    /** Digests the schedule's punctuator opened so far: the next folder of the same processor goes on from here. */
    long releasedOpened() {
        return releasedOpened;
    }

    private String newDigestId(long now, boolean released) {
        String prefix = spec.lane().name().toLowerCase() + "-digest-" + context.taskId().partition() + "-";
        Optional<RecordMetadata> meta = released ? Optional.empty() : context.recordMetadata();
        if (meta.isPresent() && meta.get().offset() >= 0) {
            // Kafka Streams names its repartition topics <application id>-<name>-repartition
            String path = meta.get().topic() != null && !meta.get().topic().endsWith("-repartition") ? "d" : "";
            return prefix + path + meta.get().offset() + "-" + now;
        }
        return prefix + "r" + (releasedOpened++) + "-" + now;
    }

    /**
     * The digest of {@code pending} to the outbox, without the ids past their deadline ({@link #expirePast}); or, when the chat became inactive while the entry was pending, one
     * SKIPPED_INACTIVE result for the digest that carries its {@code digest_count} and {@code folded_ids}.
     */
    private void emitDigest(DigestEntry pending, long now, DigestTrigger trigger) {
        DigestEntry e = expirePast(pending, now);
        if (e == null) {
            return; // every id ended EXPIRED: nothing to send
        }
        OutboundMessage digest = Outbound.digest(e, spec.lane(), now);
        ChatStatus status = chats.get(chatStatus, e.getChatId(), e.getBotId());
        if (status != null && !status.getActive()) {
            DeliveryResult skipped = Outbound.result(e.getLatest(), e.getEventClass(), spec.lane(), DeliveryStatus.SKIPPED_INACTIVE,
                    "chat " + e.getChatId() + " became inactive since " + status.getChangedAt() + " ("
                            + (status.getReason() == null ? "no reason recorded" : status.getReason()) + ") while the digest was pending", now);
            skipped.setMessageId(digest.getId());
            skipped.setDigestCount(digest.getDigestCount());
            skipped.setFoldedIds(digest.getFoldedIds());
            context.forward(new Record<>(e.getChatId(), skipped, now), resultsSink);
            counters.result(spec.lane(), e.getEventClass(), DeliveryStatus.SKIPPED_INACTIVE);
            return;
        }
        address.offer(digest, now);
        counters.digestEmitted(spec.lane(), e.getCount(), trigger);
    }

    /**
     * Every pending entry leaves as one digest, in leaving order, except that a digest to a chat with a policy limit is
     * itself one message under that limit: when the chat's GCRA refuses, the entry stays pending (folding further)
     * until a later flush finds budget, or until it is full. Without that the user would still get a message a minute,
     * only shorter ones.
     *
     * @param forced the {@code digest.max.keys} bound was reached; everything leaves, policy or not
     */
    void flush(long now, boolean forced) {
        for (KeyValue<String, DigestEntry> kv : digests.inLeavingOrder()) {
            if (forced) {
                digests.delete(kv.key);
                emitDigest(kv.value, now, DigestTrigger.MAX_KEYS);
            } else {
                DigestEntry e = expireOrKeep(kv.key, kv.value, now);
                if (e != null && policy.allows(e.getChatId(), now)) {
                    digests.delete(kv.key);
                    emitDigest(e, now, DigestTrigger.INTERVAL);
                }
            }
        }
    }

    /**
     * The deadline check (the route runs it every {@code schedule.release.interval.ms} while some pending entry has a
     * deadline before the next flush): each entry whose earliest {@code expires_at} is at most {@code leadMs} away
     * leaves now as its digest, the entries of its chat and bot that leave before it going first (as when an entry is
     * full), its chat's policy permitting; one the policy holds stays, and its ids end EXPIRED as their deadlines pass.
     * Reads the store only when some entry is due.
     */
    void leaveBeforeDeadlines(long now, long leadMs) {
        Set<String> due = digests.dueBy(now + leadMs);
        if (due.isEmpty()) {
            return;
        }
        for (KeyValue<String, DigestEntry> kv : digests.inLeavingOrder()) {
            if (!due.contains(kv.key) || digests.get(kv.key) == null) { // not due, or it left before a due one
                continue;
            }
            DigestEntry e = expireOrKeep(kv.key, kv.value, now);
            if (e == null || !policy.allows(e.getChatId(), now)) {
                continue;
            }
            digests.delete(kv.key);
            for (KeyValue<String, DigestEntry> older : digests.removeLeavingBefore(kv.key, e)) {
                emitDigest(older.value, now, DigestTrigger.DEADLINE);
            }
            emitDigest(e, now, DigestTrigger.DEADLINE);
        }
    }

    /**
     * {@link #expirePast} for the pending entry of {@code key}: null (the key deleted) when nothing is left, else what is
     * left, stored when something expired, so each id has its one result whether the entry leaves now or later.
     */
    private DigestEntry expireOrKeep(String key, DigestEntry pending, long now) {
        DigestEntry e = expirePast(pending, now);
        if (e == null) {
            digests.delete(key);
        } else if (e != pending) {
            digests.put(key, e);
        }
        return e;
    }

    /**
     * Ends the ids of {@code e} that may no longer be sent at {@code now}, each with its own EXPIRED result: those whose
     * {@code expires_at} is not after now (as the route ends an unfolded one), and, when the latest is among them, all
     * the others (the digest would show the latest's text). Returns {@code e} itself when none ended, null when all did,
     * else a copy with what is left: its ids, count, {@code first_at} and {@code last_at}; {@code latest} and
     * {@code fold_seq} unchanged (the latest is left).
     */
    private DigestEntry expirePast(DigestEntry e, long now) {
        List<FoldedMeta> folded = Outbound.folded(e);
        List<String> ids = e.getFoldedIds();
        if (ids.isEmpty()) {
            return e;
        }
        boolean anyPast = false;
        for (FoldedMeta m : folded) {
            anyPast |= past(m, now);
        }
        if (!anyPast) {
            return e;
        }
        int last = ids.size() - 1;
        FoldedMeta latest = folded.get(last);
        boolean latestPast = past(latest, now);
        List<String> keptIds = new ArrayList<>();
        List<FoldedMeta> kept = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            FoldedMeta m = folded.get(i);
            if (past(m, now)) {
                expired(e, ids.get(i), m, "expires_at " + m.getExpiresAt() + " passed while it was folded for a digest (at "
                        + Instant.ofEpochMilli(now) + ")", now);
            } else if (latestPast) {
                expired(e, ids.get(i), m, "expired with its digest: the latest notification folded with it, " + ids.get(last)
                        + ", whose text the digest shows, has expires_at " + latest.getExpiresAt() + ", passed (at "
                        + Instant.ofEpochMilli(now) + ")", now);
            } else {
                keptIds.add(ids.get(i));
                kept.add(m);
            }
        }
        if (kept.isEmpty()) {
            return null;
        }
        Instant first = kept.get(0).getCreatedAt();
        Instant lastAt = first;
        for (FoldedMeta m : kept) {
            first = m.getCreatedAt().isBefore(first) ? m.getCreatedAt() : first;
            lastAt = m.getCreatedAt().isAfter(lastAt) ? m.getCreatedAt() : lastAt;
        }
        return DigestEntry.newBuilder(e).setFoldedIds(keptIds).setFolded(kept).setCount(kept.size()).setFirstAt(first)
                .setLastAt(lastAt).build();
    }

    private static boolean past(FoldedMeta m, long now) {
        return m.getExpiresAt() != null && m.getExpiresAt().toEpochMilli() <= now;
    }

    private void expired(DigestEntry e, String id, FoldedMeta m, String reason, long now) {
        DeliveryResult r = Outbound.result(id, e.getBotId(), e.getChatId(), m.getEventClass(), spec.lane(),
                DeliveryStatus.EXPIRED, reason, now);
        context.forward(new Record<>(e.getChatId(), r, now), resultsSink);
        counters.result(spec.lane(), m.getEventClass(), DeliveryStatus.EXPIRED);
    }
}
