package dev.sluice.topology;

import dev.sluice.avro.ChatStatus;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.DigestEntry;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.Preference;
import dev.sluice.avro.SenderStatus;
import dev.sluice.topology.TopologyCounters.DigestTrigger;
import dev.sluice.topology.TopologyCounters.FoldReason;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Steps 3 to 6 of DESIGN.md's topology for one lane, node {@code <lane>-route}, whose parents are {@code <lane>-validate}
 * (records already in their chat's partition) and the {@code by-chat} repartition's source (key = chat id, so all state of a
 * chat is in this task).
 * For each notification, in this order:
 * <ol>
 *   <li>duplicate: an id ({@link #dedupeKey}) already seen by this lane's task within {@code dedupe.window.ms} ({@link SeenIds}:
 *       a filter in memory; the ids in batches in {@code <lane>-dedupe-batches}, one changelog record per batch and commit,
 *       or per id in {@code <lane>-dedupe-store} once they outgrow the filter; retention = the window)
 *       is counted and dropped: no second outbound message, no second result;</li>
 *   <li>migration: follow {@code migrated_to_chat_id} in {@code chat-status-store} for the notification's bot
 *       (re-address);</li>
 *   <li>chat inactive for the notification's bot ({@link ChatStatusTable}; a chat without an entry answered from memory,
 *       {@link ChatStatusKeys}) → a SKIPPED_INACTIVE result on
 *       {@code delivery.results} (no budget spent);</li>
 *   <li>{@code expires_at} not after now → an EXPIRED result;</li>
 *   <li>{@code not_before} after now → the time-indexed {@code <lane>-schedule-store}, at the earlier of
 *       {@code not_before} and {@code expires_at} (so a deadline applies while it waits); a wall-clock
 *       punctuator every {@code schedule.release.interval.ms}, scheduled only while the store holds one
 *       ({@link OnDemandPunctuator}), releases due notifications in that order back into this same routine (exactly
 *       once: the store delete and the output commit together);</li>
 *   <li>classify; CRITICAL → outbox now (ahead of what its chat has pending in digests, on purpose); COLLAPSIBLE →
 *       fold; ROUTINE → fold if its chat has a pending entry of its bot (its own key's: per-key order; another key's:
 *       per-chat order, it would overtake that digest), else sent on if the user opted out of digests, else fold if the bot is
 *       under pressure or the chat's policy GCRA refuses, else sent on.</li>
 * </ol>
 * Folding puts the notification in {@code <lane>-digest-store} (key {@link DigestKey}). Digests leave on a
 * wall-clock punctuator every {@code digest.flush.interval.ms} (a digest to a chat with a policy limit only
 * when its GCRA allows one more message; else it waits for a later flush), all at once when
 * {@code digest.max.keys} entries are pending, and an entry when it holds {@code digest.max.folded.ids}
 * ids (with the entries of its chat and bot that leave before it); so every folded id is in exactly one digest. A
 * chat's digests leave in the order of their latest folds ({@link PendingDigests#inLeavingOrder}): a digest shows its
 * latest notification, so it goes after everything its chat had folded before that one (its earlier notifications
 * are summed up in it); a later routine notification of the chat is processed after the flush and lands behind them
 * in the same outbox partition. Per (chat, bot) order holds; a migrated chat's digests pending under its old id are
 * not waited for (they go to the old id's partition, with no order to the new one's).
 *
 * <p>Two choices worth knowing: a pending digest entry of the chat wins over the digest opt-out (a user who opts out
 * while entries are pending gets them in digests, then one by one), because per-chat order matters more; and a
 * migration is followed through the statuses this task holds: the new id's own status usually lives in
 * another partition (where notifications that producers address to the new id are handled), so a
 * re-addressed notification is not checked against it.
 *
 * <p>Output, forwarded by name (issue 21 session 9: no branch or mapValues nodes after this one): an OutboundMessage goes
 * through {@link EditAddressing} (an edit or delete gets its target's provider message id, or waits, or ends FAILED) and
 * {@link Outbound#parts} (a too-long text under {@code text.too.long=split} as its ordered parts) to
 * {@code <lane>-outbox-sink}; a DeliveryResult to {@code <lane>-results-sink} ({@code delivery.results}); key = the
 * (re-addressed) chat id, timestamp = the wall-clock time of the decision. A CRITICAL notification sent on asks for an
 * early commit ({@link CriticalCommits}, {@code critical.commit.interval.ms}), so its transaction does not wait for
 * {@code commit.interval.ms}. One instance per task and lane; its state (stores, {@link PendingDigests},
 * {@link BotPressure}'s kept reports, {@link EditAddressing}'s waiting chats) belongs to the task's stream thread.
 */
final class RouteProcessor extends ContextualProcessor<String, Notification, String, SpecificRecord> {
    private static final int MAX_MIGRATION_HOPS = 8;
    private static final int MAX_RELEASE_PER_PUNCTUATION = 10_000;
    /** Attribute {@code sluice replay} sets on a notification it re-creates from a result. */
    static final String REPLAYED_FROM_ATTRIBUTE = "sluice.replayed.from";

    private final LaneSpec spec;
    private final TopologyConfig config;
    private final Classifier classifier;
    private final TopologyCounters counters;
    private final Deserializer<SenderStatus> senderStatusDeserializer;
    private final StoreChanges senderStatusChanges;
    private final Deserializer<Preference> preferenceDeserializer;
    private final ChatStatusKeys chatStatusKeys;
    private final PreferenceKeys preferenceKeys;
    /** This task's chats with an entry in {@code chat-status-store}: a chat without one is answered without a read. */
    private ChatStatusKeys.Task chats;

    private KeyValueStore<String, ChatStatus> chatStatus;
    private PolicyTats policy;
    private PendingDigests digests;
    private KeyValueStore<Bytes, Notification> schedule;
    private SeenIds dedupe;
    private long releasedOpened;
    private BotPressure pressure;
    private DigestPreferences preferences;
    private CriticalCommits criticalCommits;
    /** The schedule release, scheduled only while {@code <lane>-schedule-store} holds a notification. */
    private OnDemandPunctuator releases;
    /** Edits and deletes addressed on their way out ({@code provider-message-id-store}, {@code <lane>-edit-wait-store}). */
    private EditAddressing address;
    private final String outboxSink;
    private final String resultsSink;

    RouteProcessor(LaneSpec spec, TopologyConfig config, Classifier classifier, TopologyCounters counters,
                   Deserializer<SenderStatus> senderStatusDeserializer, StoreChanges senderStatusChanges,
                   Deserializer<Preference> preferenceDeserializer, ChatStatusKeys chatStatusKeys, PreferenceKeys preferenceKeys) {
        this.spec = spec;
        this.config = config;
        this.classifier = classifier;
        this.counters = counters;
        this.senderStatusDeserializer = senderStatusDeserializer;
        this.senderStatusChanges = senderStatusChanges;
        this.preferenceDeserializer = preferenceDeserializer;
        this.chatStatusKeys = chatStatusKeys;
        this.preferenceKeys = preferenceKeys;
        this.outboxSink = spec.name(SluiceTopology.OUTBOX_SINK);
        this.resultsSink = spec.name(SluiceTopology.RESULTS_SINK);
    }

    @Override
    public void init(ProcessorContext<String, SpecificRecord> context) {
        super.init(context);
        chatStatus = context.getStateStore(SluiceTopology.CHAT_STATUS_STORE);
        chats = chatStatusKeys.forTask(context.taskId());
        policy = new PolicyTats(config.chatPolicy(), context.getStateStore(SluiceTopology.CHAT_POLICY_STORE));
        // Stores are restored before init: PendingDigests reads the entries a previous run left pending.
        digests = new PendingDigests(context.getStateStore(SluiceTopology.digestStore(spec)));
        schedule = context.getStateStore(SluiceTopology.scheduleStore(spec));
        dedupe = SeenIds.open(context, spec, config.dedupeWindowMs());
        pressure = new BotPressure(context.getStateStore(SluiceTopology.SENDER_STATUS_STORE), senderStatusDeserializer,
                config.topics().senderStatus(), config.pressureDrainTimeThresholdMs(), config.pressureStatusMaxAgeMs(),
                senderStatusChanges);
        preferences = new DigestPreferences(context.getStateStore(SluiceTopology.PREFERENCES_STORE), preferenceDeserializer,
                config.topics().preferences(), preferenceKeys);
        context.schedule(Duration.ofMillis(config.digestFlushIntervalMs()), PunctuationType.WALL_CLOCK_TIME, this::flushAll);
        releases = new OnDemandPunctuator(Duration.ofMillis(config.scheduleReleaseIntervalMs()), this::release);
        releases.init(context);
        if (scheduleHolds()) { // restored entries a previous run left scheduled
            releases.ensure();
        }
        criticalCommits = new CriticalCommits(config.criticalCommitIntervalMs());
        address = new EditAddressing(spec, config, new EditAddressing.Out() {
            @Override
            public void outbound(OutboundMessage m, long now) {
                // a too-long text (text.too.long=split) leaves as its ordered parts, same key: per-chat order
                for (OutboundMessage part : Outbound.parts(m)) {
                    context().forward(new Record<>(part.getChatId(), part, now), outboxSink);
                }
            }

            @Override
            public void failed(DeliveryResult r, long now) {
                context().forward(new Record<>(r.getChatId(), r, now), resultsSink);
            }
        });
        address.init(context);
    }

    @Override
    public void process(Record<String, Notification> record) {
        long now = context().currentSystemTimeMs();
        criticalCommits.nextRecord(context(), now);
        String id = dedupeKey(record.value());
        if (dedupe.seen(id, now)) {
            counters.duplicate(spec.lane());
            return;
        }
        dedupe.remember(id, now);
        route(record.value(), now, false);
    }

    /**
     * The id, plus the {@value #REPLAYED_FROM_ATTRIBUTE} attribute that {@code sluice replay} adds: a replay of a
     * notification that ended without delivery is a new attempt, not a duplicate of the original (the same
     * replay written twice is).
     */
    static String dedupeKey(Notification n) {
        String replayed = n.getAttributes().get(REPLAYED_FROM_ATTRIBUTE);
        return replayed == null ? n.getId() : n.getId() + "\u001F" + replayed;
    }

    private void route(Notification original, long now, boolean released) {
        Notification n = original;
        String chat = n.getChatId();
        ChatStatus status = chats.get(chatStatus, chat, n.getBotId());
        for (int hops = 0; status != null && status.getMigratedToChatId() != null && hops < MAX_MIGRATION_HOPS; hops++) {
            chat = status.getMigratedToChatId();
            status = chats.get(chatStatus, chat, n.getBotId());
        }
        if (!chat.equals(n.getChatId())) {
            HashMap<String, String> attributes = new HashMap<>(n.getAttributes());
            attributes.putIfAbsent(Outbound.MIGRATED_FROM_ATTRIBUTE, n.getChatId());
            n = Notification.newBuilder(n).setChatId(chat).setAttributes(attributes).build();
        }
        NotificationClass eventClass = classifier.classify(n);
        if (status != null && !status.getActive()) {
            String reason = "chat " + chat + " is inactive since " + status.getChangedAt() + " ("
                    + (status.getReason() == null ? "no reason recorded" : status.getReason()) + ")";
            result(n, eventClass, DeliveryStatus.SKIPPED_INACTIVE, reason, now);
            return;
        }
        if (n.getExpiresAt() != null && n.getExpiresAt().toEpochMilli() <= now) {
            result(n, eventClass, DeliveryStatus.EXPIRED, "expires_at " + n.getExpiresAt()
                    + " passed before the topology could release it (at " + Instant.ofEpochMilli(now) + ")", now);
            return;
        }
        if (!released && n.getNotBefore() != null && n.getNotBefore().toEpochMilli() > now) {
            // Kept until the earlier of not_before and expires_at: released at its deadline, it ends EXPIRED then.
            long releaseAt = n.getExpiresAt() == null ? n.getNotBefore().toEpochMilli()
                    : Math.min(n.getNotBefore().toEpochMilli(), n.getExpiresAt().toEpochMilli());
            schedule.put(scheduleKey(releaseAt, original.getId()), original);
            releases.ensure();
            counters.scheduled(spec.lane());
            return;
        }
        if (RichMessageValidator.isEditOrDelete(n)) {
            sendOn(n, eventClass, now); // an edit or delete is never folded: a digest would lose what it asks
            return;
        }
        switch (eventClass) {
            case CRITICAL -> sendOn(n, eventClass, now);
            case COLLAPSIBLE -> {
                String key = DigestKey.of(n, chat);
                fold(key, digests.get(key), n, eventClass, FoldReason.COLLAPSIBLE, now, released);
            }
            case ROUTINE -> {
                // While the chat holds any pending entry, a routine notification folds too (into its own key's entry):
                // sent on, it would reach the chat before the earlier notifications held in those digests (per-chat
                // order; the demo's order_violations, session 17). The digest key is built only then or when it folds.
                boolean chatPending = digests.holdsChat(chat, n.getBotId());
                String pendingKey = chatPending ? DigestKey.of(n, chat) : null;
                DigestEntry pending = pendingKey == null ? null : digests.get(pendingKey);
                FoldReason reason = pending != null ? FoldReason.PENDING_KEY
                        : chatPending ? FoldReason.PENDING_CHAT
                        : preferences.optedOut(n.getUserId() != null ? n.getUserId() : chat) ? null
                        : pressure.underPressure(n.getBotId(), now) ? FoldReason.PRESSURE
                        : !policy.allows(chat, now) ? FoldReason.POLICY : null;
                if (reason == null) {
                    sendOn(n, eventClass, now);
                } else {
                    fold(pendingKey != null ? pendingKey : DigestKey.of(n, chat), pending, n, eventClass, reason, now, released);
                }
            }
            default -> throw new IllegalStateException("unknown class " + eventClass);
        }
    }

    private void sendOn(Notification n, NotificationClass eventClass, long now) {
        address.offer(Outbound.single(n, eventClass, spec.lane(), now), now);
        counters.sentOn(spec.lane(), eventClass);
        if (eventClass == NotificationClass.CRITICAL) {
            criticalCommits.critical(context(), now); // its transaction closes now, not at commit.interval.ms
        }
    }

    private void result(Notification n, NotificationClass eventClass, DeliveryStatus status, String reason, long now) {
        context().forward(new Record<>(n.getChatId(), Outbound.result(n, eventClass, spec.lane(), status, reason, now), now),
                resultsSink);
        counters.result(spec.lane(), eventClass, status);
    }

    private void fold(String key, DigestEntry pending, Notification n, NotificationClass eventClass, FoldReason reason, long now,
                      boolean released) {
        DigestEntry e = pending;
        if (e == null) {
            e = DigestEntry.newBuilder().setBotId(n.getBotId()).setChatId(n.getChatId()).setKind(n.getKind())
                    .setEntity(n.getEntity()).setEventClass(eventClass).setCount(0).setFirstAt(n.getCreatedAt())
                    .setLastAt(n.getCreatedAt()).setFoldedAt(Instant.ofEpochMilli(now)).setLatest(n)
                    .setFoldedIds(new ArrayList<>()).setDigestId(newDigestId(now, released)).build();
        }
        List<String> ids = new ArrayList<>(e.getFoldedIds());
        ids.add(n.getId());
        e.setFoldedIds(ids);
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
     * that opens it (the same when a task is retried under exactly-once, unique per partition and offset), or
     * {@code <lane>-digest-<partition>-r<n>-<now>} when the schedule's punctuator opens it (n counts such openings
     * in this instance). Never derived from a folded id, so a repeated id cannot make two digests collide (F4).
     */
    private String newDigestId(long now, boolean released) {
        String prefix = spec.lane().name().toLowerCase() + "-digest-" + context().taskId().partition() + "-";
        Optional<RecordMetadata> meta = released ? Optional.empty() : context().recordMetadata();
        if (meta.isPresent() && meta.get().offset() >= 0) {
            return prefix + meta.get().offset() + "-" + now;
        }
        return prefix + "r" + (releasedOpened++) + "-" + now;
    }

    /**
     * The digest of {@code e} to the outbox; or, when the chat became inactive while the entry was pending, one
     * SKIPPED_INACTIVE result for the digest that carries its {@code digest_count} and {@code folded_ids}.
     */
    private void emitDigest(DigestEntry e, long now, DigestTrigger trigger) {
        OutboundMessage digest = Outbound.digest(e, spec.lane(), now);
        ChatStatus status = chats.get(chatStatus, e.getChatId(), e.getBotId());
        if (status != null && !status.getActive()) {
            DeliveryResult skipped = Outbound.result(e.getLatest(), e.getEventClass(), spec.lane(), DeliveryStatus.SKIPPED_INACTIVE,
                    "chat " + e.getChatId() + " became inactive since " + status.getChangedAt() + " ("
                            + (status.getReason() == null ? "no reason recorded" : status.getReason()) + ") while the digest was pending", now);
            skipped.setMessageId(digest.getId());
            skipped.setDigestCount(digest.getDigestCount());
            skipped.setFoldedIds(digest.getFoldedIds());
            context().forward(new Record<>(e.getChatId(), skipped, now), resultsSink);
            counters.result(spec.lane(), e.getEventClass(), DeliveryStatus.SKIPPED_INACTIVE);
            return;
        }
        address.offer(digest, now);
        counters.digestEmitted(spec.lane(), e.getCount(), trigger);
    }

    /**
     * Wall-clock punctuator: every pending entry leaves as one digest, oldest first, except that a digest to a
     * chat with a policy limit is itself one message under that limit: when the chat's GCRA refuses, the entry
     * stays pending (folding further) until a later flush finds budget, or until it is full. Without that the
     * user would still get a message a minute, only shorter ones.
     */
    void flushAll(long now) {
        flush(now, false);
        policy.sweepIdle(now);
    }

    /** {@code forced}: the {@code digest.max.keys} bound was reached; everything leaves, policy or not. */
    private void flush(long now, boolean forced) {
        for (KeyValue<String, DigestEntry> kv : digests.inLeavingOrder()) {
            if (!forced && !policy.allows(kv.value.getChatId(), now)) {
                continue;
            }
            digests.delete(kv.key);
            emitDigest(kv.value, now, forced ? DigestTrigger.MAX_KEYS : DigestTrigger.INTERVAL);
        }
    }

    /** Wall-clock punctuator: releases notifications whose not_before (or earlier expires_at) has come, in that order. */
    void release(long now) {
        List<KeyValue<Bytes, Notification>> due = new ArrayList<>();
        try (KeyValueIterator<Bytes, Notification> it = schedule.range(Bytes.wrap(longBytes(0)), Bytes.wrap(longBytes(now + 1)))) {
            while (it.hasNext() && due.size() < MAX_RELEASE_PER_PUNCTUATION) {
                due.add(it.next());
            }
        }
        for (KeyValue<Bytes, Notification> kv : due) {
            schedule.delete(kv.key);
            counters.released(spec.lane());
            route(kv.value, now, true);
        }
        if (due.size() < MAX_RELEASE_PER_PUNCTUATION && !scheduleHolds()) {
            releases.cancel(); // nothing waits: no punctuation until the next notification is scheduled
        }
    }

    /** Whether {@code <lane>-schedule-store} holds any notification. */
    private boolean scheduleHolds() {
        try (KeyValueIterator<Bytes, Notification> it = schedule.all()) {
            return it.hasNext();
        }
    }

    /** 8-byte big-endian not_before then the id: byte order is time order for instants after 1970. */
    static Bytes scheduleKey(long notBeforeMs, String id) {
        byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
        return Bytes.wrap(ByteBuffer.allocate(8 + idBytes.length).putLong(notBeforeMs).put(idBytes).array());
    }

    private static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }
}
