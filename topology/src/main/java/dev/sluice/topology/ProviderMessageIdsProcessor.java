package dev.sluice.topology;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Learns from {@code delivery.results} (keyed by chat, read in the same task as the {@code by-chat} repartition) what became
 * of each notification id, for edits and deletes (issue 20): {@code provider-message-id-store} maps
 * {@code <chat> U+001F <notification id>} to {@code D:<provider message id>} for a DELIVERED result with a provider message id,
 * else to {@code X:<status>} (no message to edit). A digest's result is recorded for each of its {@code folded_ids}. The store
 * is a window store: entries leave after {@code edit.target.retention.ms}. Owned by the stream thread of its task.
 */
final class ProviderMessageIdsProcessor extends ContextualProcessor<byte[], byte[], Void, Void> {
    private static final Logger log = LoggerFactory.getLogger(ProviderMessageIdsProcessor.class);
    private final Deserializer<DeliveryResult> deserializer;
    private WindowStore<String, String> ids;

    ProviderMessageIdsProcessor(Deserializer<DeliveryResult> deserializer) {
        this.deserializer = deserializer;
    }

    /** The store key of notification {@code id} in {@code chat}. */
    static String key(String chat, String id) {
        return chat + '\u001f' + id;
    }

    /** The store value of a result: {@code D:<id>} when a message exists, else {@code X:<status>}. */
    static String value(DeliveryResult r) {
        return r.getStatus() == DeliveryStatus.DELIVERED && r.getProviderMessageId() != null && r.getProviderMessageId() > 0
                ? "D:" + r.getProviderMessageId() : "X:" + r.getStatus();
    }

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        super.init(context);
        ids = context.getStateStore(SluiceTopology.PROVIDER_MESSAGE_ID_STORE);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        DeliveryResult r = SideInputRecords.decodeOrSkip(deserializer, context(), record, log);
        if (r == null || r.getChatId() == null || r.getChatId().isEmpty()) {
            return;
        }
        String value = value(r);
        long at = record.timestamp();
        ids.put(key(r.getChatId(), r.getMessageId()), value, at);
        for (String folded : r.getFoldedIds()) {
            ids.put(key(r.getChatId(), folded), value, at);
        }
    }
}
