package dev.sluice.topology;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.MessagePart;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Folds the results of the parts of a split notification ({@code text.too.long=split}) into the notification's ONE
 * result (node {@code delivery-parts-aggregate}, between {@code delivery-parts-source} on {@code delivery.parts} and
 * {@code delivery-parts-results-sink} on {@code delivery.results}).
 *
 * <p>Store {@value SluiceTopology#PART_RESULTS_STORE} (changelogged, so a restart or a task moving to another instance
 * continues where it was): key {@code <chat> U+001E <parent id>#<k>/<n>} holds the first result of part k of n (a later
 * copy, as a sender writes after a crash, is ignored); when all n are there they are folded, the folded result is
 * written, the part entries are deleted and the folded result stays under {@code <chat> U+001E <parent id>#done} as a
 * marker, so a late copy of a part result writes no second result. The chat (the result's {@code chat_id}) keeps two
 * notifications with one id for two chats apart (the id is unique per bot, but the topology routes a reuse for another
 * chat, which then ends FAILED at the sender: its parts must not take the other chat's slots). Entries the previous
 * version wrote without the chat ({@code <parent id>#<k>/<n>}, {@code <parent id>#done}) are still read when they hold
 * a result of the same chat. A marker only stops results of the same round: one with the same {@code due_at}
 * (every part of one split shares it); a notification sent again under its id (a replay) gets a new {@code due_at} and
 * its own result. Under exactly-once the store, the marker and the output commit together.
 *
 * <p>The fold: DELIVERED with part 1's provider message id when every part was delivered; otherwise the status, reason
 * (prefixed {@code part k/n: }), error code, chat and sender instance of the first part (by index) that was not
 * delivered. {@code attempts} is the sum over the parts, {@code due_at} part 1's, {@code sent_at} the latest,
 * {@code result_at} now; {@code part} is null.
 *
 * <p>A wall-clock punctuator ({@link #PURGE_INTERVAL}) deletes entries whose {@code result_at} is older than
 * {@link #RETENTION} (7 days): markers, and parts whose siblings never got a result (logged).
 *
 * <p>A record on {@code delivery.parts} without a {@code part} is passed on unchanged (no result is lost); an unreadable
 * one is skipped with a warning, as the other readers of results do. Owned by the stream thread of its task.
 */
final class PartResultsProcessor extends ContextualProcessor<byte[], byte[], String, DeliveryResult> {
    private static final Logger log = LoggerFactory.getLogger(PartResultsProcessor.class);
    /** How long a marker, or a part waiting for its siblings, is kept. */
    static final Duration RETENTION = Duration.ofDays(7);
    /** How often entries older than {@link #RETENTION} are deleted. */
    static final Duration PURGE_INTERVAL = Duration.ofHours(1);
    private static final String DONE = "#done";

    private final Deserializer<DeliveryResult> deserializer;
    private KeyValueStore<String, DeliveryResult> store;

    PartResultsProcessor(Deserializer<DeliveryResult> deserializer) {
        this.deserializer = deserializer;
    }

    /** The previous version's key of part k of n of {@code parentId} (no chat); it is also that part's message id. */
    static String partKey(String parentId, int index, int count) {
        return parentId + "#" + index + "/" + count;
    }

    static String doneKey(String parentId) {
        return parentId + DONE;
    }

    /** The store key of {@code key} ({@link #partKey} or {@link #doneKey}) for the chat. */
    static String inChat(String chat, String key) {
        return chat + RouteDedupe.CHAT_SEPARATOR + key;
    }

    /** The entry under the chat's key, else the previous version's entry of {@code key} when it is that chat's. */
    private DeliveryResult get(String chat, String key) {
        DeliveryResult r = store.get(inChat(chat, key));
        if (r == null) {
            r = store.get(key);
            return r != null && chat.equals(r.getChatId()) ? r : null;
        }
        return r;
    }

    /** Deletes the chat's entry of {@code key} and the previous version's, when it is that chat's. */
    private void delete(String chat, String key) {
        store.delete(inChat(chat, key));
        DeliveryResult old = store.get(key);
        if (old != null && chat.equals(old.getChatId())) {
            store.delete(key);
        }
    }

    @Override
    public void init(ProcessorContext<String, DeliveryResult> context) {
        super.init(context);
        store = context.getStateStore(SluiceTopology.PART_RESULTS_STORE);
        context.schedule(PURGE_INTERVAL, PunctuationType.WALL_CLOCK_TIME, this::purge);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        DeliveryResult r = SideInputRecords.decodeOrSkip(deserializer, context(), record, log);
        if (r == null) {
            return;
        }
        String topic = context().recordMetadata().map(m -> m.topic()).orElse("unknown");
        MessagePart part = r.getPart();
        if (part == null) {
            log.warn("result of {} on {} is not a part's: passed on to the results as it is", r.getMessageId(), topic);
            context().forward(new Record<>(r.getChatId(), r, record.timestamp()));
            return;
        }
        int n = part.getCount();
        int k = part.getIndex();
        String parent = part.getParentId();
        if (n < 1 || k < 1 || k > n || parent == null) {
            log.warn("skipping the result of {} on {}: part {}/{} makes no sense", r.getMessageId(), topic, k, n);
            return;
        }
        String chat = String.valueOf(r.getChatId());
        DeliveryResult done = get(chat, doneKey(parent));
        if (done != null && Objects.equals(done.getDueAt(), r.getDueAt())) {
            log.debug("result of part {}/{} of {} arrived after its notification's result: ignored", k, n, parent);
            return;
        }
        String key = partKey(parent, k, n);
        DeliveryResult held = get(chat, key);
        if (held == null || !Objects.equals(held.getDueAt(), r.getDueAt())) {
            held = r;
            store.put(inChat(chat, key), r); // the first result of this part in this round
        }
        List<DeliveryResult> parts = new ArrayList<>(n);
        for (int i = 1; i <= n; i++) {
            DeliveryResult p = i == k ? held : get(chat, partKey(parent, i, n));
            if (p == null || !Objects.equals(p.getDueAt(), r.getDueAt())) {
                return; // still waiting for part i
            }
            parts.add(p);
        }
        DeliveryResult folded = fold(parent, parts, context().currentSystemTimeMs());
        for (int i = 1; i <= n; i++) {
            delete(chat, partKey(parent, i, n));
        }
        store.put(inChat(chat, doneKey(parent)), folded);
        context().forward(new Record<>(folded.getChatId(), folded, record.timestamp()));
    }

    /** The one result of {@code parentId} from its parts' results, in part order (see the class doc). */
    static DeliveryResult fold(String parentId, List<DeliveryResult> parts, long nowMs) {
        DeliveryResult first = parts.get(0);
        int failedIndex = -1;
        for (int i = 0; i < parts.size(); i++) {
            if (parts.get(i).getStatus() != DeliveryStatus.DELIVERED) {
                failedIndex = i;
                break;
            }
        }
        DeliveryResult decider = failedIndex < 0 ? first : parts.get(failedIndex);
        int attempts = 0;
        Instant sentAt = null;
        for (DeliveryResult p : parts) {
            attempts += p.getAttempts();
            if (p.getSentAt() != null && (sentAt == null || p.getSentAt().isAfter(sentAt))) {
                sentAt = p.getSentAt();
            }
        }
        return DeliveryResult.newBuilder()
                .setMessageId(parentId)
                .setBotId(decider.getBotId())
                .setChatId(decider.getChatId())
                .setStatus(decider.getStatus())
                .setEventClass(first.getEventClass())
                .setLane(first.getLane())
                .setReason(failedIndex < 0 ? null : "part " + (failedIndex + 1) + "/" + parts.size() + ": "
                        + (decider.getReason() == null ? decider.getStatus().name() : decider.getReason()))
                .setErrorCode(failedIndex < 0 ? null : decider.getErrorCode())
                .setProviderMessageId(first.getStatus() == DeliveryStatus.DELIVERED ? first.getProviderMessageId() : null)
                .setAttempts(attempts)
                .setDueAt(first.getDueAt())
                .setSentAt(sentAt)
                .setResultAt(Instant.ofEpochMilli(nowMs))
                .setDigestCount(0)
                .setFoldedIds(List.of())
                .setMigratedToChatId(decider.getMigratedToChatId())
                .setSenderInstance(decider.getSenderInstance())
                .setPart(null)
                .build();
    }

    private void purge(long nowMs) {
        long oldest = nowMs - RETENTION.toMillis();
        List<String> stale = new ArrayList<>();
        try (KeyValueIterator<String, DeliveryResult> it = store.all()) {
            while (it.hasNext()) {
                var e = it.next();
                if (e.value == null || e.value.getResultAt().toEpochMilli() < oldest) {
                    stale.add(e.key);
                    if (e.value != null && e.value.getPart() != null) {
                        log.warn("purging the result of part {} of {} after {}: its other parts have no result",
                                e.value.getPart().getIndex() + "/" + e.value.getPart().getCount(),
                                e.value.getPart().getParentId(), RETENTION);
                    }
                }
            }
        }
        stale.forEach(store::delete);
    }
}
