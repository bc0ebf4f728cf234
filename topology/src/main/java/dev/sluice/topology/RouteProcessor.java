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
import dev.sluice.topology.TopologyCounters.FoldReason;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Steps 3 to 6 of DESIGN.md's topology for one lane, node {@code <lane>-route}, whose parents are {@code <lane>-validate}
 * (records already in their chat's partition) and the {@code by-chat} repartition's source (key = chat id, so all state of a
 * chat is in this task).
 * For each notification, in this order:
 * <ol>
 *   <li>duplicate: an id already seen for the same chat by this lane's task within {@code dedupe.window.ms}
 *       ({@link RouteDedupe}: the same id for another chat is not a duplicate here; {@link SeenIds}:
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
 *   <li>classify; CRITICAL, an edit or delete, or a replay ({@code sluice.replayed.from}: the sender checks its own
 *       id's marks) → outbox now (ahead of what its chat has pending in digests, on purpose); COLLAPSIBLE →
 *       fold; ROUTINE → fold if its chat has a pending entry of its bot (its own key's: per-key order; another key's:
 *       per-chat order, it would overtake that digest), else sent on if the user opted out of digests, else fold if the bot is
 *       under pressure or the chat's policy GCRA refuses, else sent on.</li>
 * </ol>
 * What folds is decided here; folding into {@code <lane>-digest-store} (key {@link DigestKey}) and the digests' leaving
 * (when, in which order, and to a chat that became inactive) are {@link DigestFolder}'s, whose flush runs on a
 * wall-clock punctuator every {@code digest.flush.interval.ms} scheduled here ({@link #flushAll}). A folded notification
 * keeps its {@code expires_at} (see {@link DigestFolder}): while a pending entry's earliest deadline, less
 * {@code digest.deadline.lead.ms}, comes before the next flush, a second wall-clock punctuator
 * ({@link #checkDeadlines}, every {@code schedule.release.interval.ms}) sends it early or ends it EXPIRED at its
 * deadline. It is one {@link OnDemandPunctuator} per task, scheduled when such an entry appears (at a fold, after a
 * flush, at init for restored entries) and cancelled by its own run when none is left: a fold costs a comparison, never a
 * schedule of its own.
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
 * {@link DigestFolder}'s, {@link BotPressure}'s kept reports, {@link EditAddressing}'s waiting chats) belongs to the
 * task's stream thread.
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
    /** Folding and flushing into {@link #digests}. */
    private DigestFolder folder;
    private KeyValueStore<Bytes, Notification> schedule;
    private RouteDedupe dedupe;
    private BotPressure pressure;
    private DigestPreferences preferences;
    private CriticalCommits criticalCommits;
    /** The schedule release, scheduled only while {@code <lane>-schedule-store} holds a notification. */
    private OnDemandPunctuator releases;
    /** The digest deadline check, scheduled only while a pending entry's deadline comes before the next flush. */
    private OnDemandPunctuator deadlineChecks;
    /** Wall-clock time (ms) of the next regular digest flush ({@link #flushAll}). */
    private long nextFlushAt;
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
        dedupe = RouteDedupe.open(context, spec, config.dedupeWindowMs());
        pressure = new BotPressure(context.getStateStore(SluiceTopology.SENDER_STATUS_STORE), senderStatusDeserializer,
                config.topics().senderStatus(), config.pressureDrainTimeThresholdMs(), config.pressureStatusMaxAgeMs(),
                senderStatusChanges);
        preferences = new DigestPreferences(context.getStateStore(SluiceTopology.PREFERENCES_STORE), preferenceDeserializer,
                config.topics().preferences(), preferenceKeys);
        context.schedule(Duration.ofMillis(config.digestFlushIntervalMs()), PunctuationType.WALL_CLOCK_TIME, this::flushAll);
        nextFlushAt = context.currentSystemTimeMs() + config.digestFlushIntervalMs();
        deadlineChecks = new OnDemandPunctuator(Duration.ofMillis(config.scheduleReleaseIntervalMs()), this::checkDeadlines);
        deadlineChecks.init(context);
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
        folder = new DigestFolder(context, spec, config, counters, digests, policy, chats, chatStatus, address, resultsSink,
                folder == null ? 0 : folder.releasedOpened()); // a re-init (a revived task) keeps the ids unique
        if (deadlineBeforeNextFlush(digests.earliestDeadline())) { // restored entries a previous run left pending
            deadlineChecks.ensure();
        }
    }

    @Override
    public void process(Record<String, Notification> record) {
        long now = context().currentSystemTimeMs();
        criticalCommits.nextRecord(context(), now);
        if (dedupe.repeat(record.value(), now)) {
            counters.duplicate(spec.lane());
            return;
        }
        route(record.value(), now, false);
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
            // chat and id (RouteDedupe#key): the same id for two chats due at the same instant are two entries
            schedule.put(scheduleKey(releaseAt, RouteDedupe.key(original)), original);
            releases.ensure();
            counters.scheduled(spec.lane());
            return;
        }
        if (RichMessageValidator.isEditOrDelete(n)) {
            sendOn(n, eventClass, now); // an edit or delete is never folded: a digest would lose what it asks
            return;
        }
        if (n.getAttributes().containsKey(REPLAYED_FROM_ATTRIBUTE)) {
            // a replay is never folded: a digest has an id of its own, so the sender would never read the sent marks of
            // the replayed id and an earlier delivered attempt would reach the chat again (ReplayNotFoldedTest)
            sendOn(n, eventClass, now);
            return;
        }
        switch (eventClass) {
            case CRITICAL -> sendOn(n, eventClass, now);
            case COLLAPSIBLE -> {
                String key = DigestKey.of(n, chat);
                folder.fold(key, digests.get(key), n, eventClass, FoldReason.COLLAPSIBLE, now, released);
                deadlineFolded(n);
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
                    folder.fold(pendingKey != null ? pendingKey : DigestKey.of(n, chat), pending, n, eventClass, reason, now,
                            released);
                    deadlineFolded(n);
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

    /**
     * Wall-clock punctuator every {@code digest.flush.interval.ms}: the pending digests leave ({@link DigestFolder#flush},
     * a chat's policy limit applying), then the policy TATs of idle chats are swept ({@link PolicyTats#sweepIdle}).
     */
    void flushAll(long now) {
        folder.flush(now, false);
        nextFlushAt = now + config.digestFlushIntervalMs();
        policy.sweepIdle(now);
        if (deadlineBeforeNextFlush(digests.earliestDeadline())) { // an entry the policy held, or one folded since
            deadlineChecks.ensure();
        }
    }

    /**
     * Wall-clock punctuator every {@code schedule.release.interval.ms} while it has work: entries whose deadline is near
     * leave or end ({@link DigestFolder#leaveBeforeDeadlines}); it stops when no pending deadline comes before the next
     * flush.
     */
    void checkDeadlines(long now) {
        folder.leaveBeforeDeadlines(now, config.digestDeadlineLeadMs());
        if (!deadlineBeforeNextFlush(digests.earliestDeadline())) {
            deadlineChecks.cancel();
        }
    }

    /** After a fold of {@code n}: the deadline check runs while its deadline comes before the next flush. */
    private void deadlineFolded(Notification n) {
        if (n.getExpiresAt() != null && deadlineBeforeNextFlush(n.getExpiresAt().toEpochMilli())) {
            deadlineChecks.ensure(); // a no-op while scheduled
        }
    }

    /** Whether an entry with deadline {@code deadlineMs} must leave (or end) before the next regular flush. */
    private boolean deadlineBeforeNextFlush(long deadlineMs) {
        return deadlineMs != Long.MAX_VALUE && deadlineMs - config.digestDeadlineLeadMs() < nextFlushAt;
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

    /**
     * 8-byte big-endian not_before then the id (since the dedupe's scope, {@link RouteDedupe#key}; entries written
     * before keep the bare id): byte order is time order for instants after 1970.
     */
    static Bytes scheduleKey(long notBeforeMs, String id) {
        byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
        return Bytes.wrap(ByteBuffer.allocate(8 + idBytes.length).putLong(notBeforeMs).put(idBytes).array());
    }

    private static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }
}
