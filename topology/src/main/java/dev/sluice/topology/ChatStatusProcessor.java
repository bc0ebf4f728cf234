package dev.sluice.topology;

import dev.sluice.avro.ChatEvent;
import dev.sluice.avro.ChatStatus;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.schemas.SchemaRegistryException;
import java.time.Instant;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the chat status table ({@value SluiceTopology#CHAT_STATUS_STORE}, DESIGN.md Topology step 3) from
 * {@code chat.events} and {@code delivery.results}, both keyed by chat id and co-partitioned with the
 * {@code by-chat} repartition (same partition count):
 * <ul>
 *   <li>ChatEvent ACTIVE (the user wrote to the bot) → active; BLOCKED or DEACTIVATED → inactive;
 *       MIGRATED → {@code migrated_to_chat_id} = the event's {@code new_chat_id};</li>
 *   <li>DeliveryResult BLOCKED → inactive; DELIVERED → active (the chat evidently works again); a result
 *       with {@code migrated_to_chat_id} → migrated. Other results (the topology's own SKIPPED_INACTIVE and
 *       EXPIRED, FAILED, UNCERTAIN) say nothing about the chat and are ignored.</li>
 * </ul>
 * A fact older than the one that set the current state ({@code changed_at}) is ignored, so the two topics
 * may interleave. A record that cannot be read is logged and skipped (these topics are written by Sluice
 * itself); a retriable registry failure is rethrown so the record is read again.
 */
final class ChatStatusProcessor<T> extends ContextualProcessor<byte[], byte[], Void, Void> {
    private static final Logger log = LoggerFactory.getLogger(ChatStatusProcessor.class);

    /** A status change a record implies, or null for none. */
    record Change(String chatId, Boolean active, String migratedTo, String reason, long at) {
    }

    interface Reader<T> {
        Change change(String key, T value);
    }

    private final Deserializer<T> deserializer;
    private final Reader<T> reader;
    private KeyValueStore<String, ChatStatus> store;

    ChatStatusProcessor(Deserializer<T> deserializer, Reader<T> reader) {
        this.deserializer = deserializer;
        this.reader = reader;
    }

    static ChatStatusProcessor<ChatEvent> fromChatEvents(Deserializer<ChatEvent> d) {
        return new ChatStatusProcessor<>(d, (key, e) -> {
            String chat = key != null && !key.isBlank() ? key : e.getChatId();
            long at = e.getAt().toEpochMilli();
            return switch (e.getType()) {
                case ACTIVE -> new Change(chat, true, null, "chat.events ACTIVE (the user wrote to the bot)", at);
                case BLOCKED, DEACTIVATED -> new Change(chat, false, null, "chat.events " + e.getType(), at);
                case MIGRATED -> e.getNewChatId() == null || e.getNewChatId().isBlank() ? null
                        : new Change(chat, null, e.getNewChatId(), "chat.events MIGRATED to " + e.getNewChatId(), at);
            };
        });
    }

    static ChatStatusProcessor<DeliveryResult> fromDeliveryResults(Deserializer<DeliveryResult> d) {
        return new ChatStatusProcessor<>(d, (key, r) -> {
            String chat = key != null && !key.isBlank() ? key : r.getChatId();
            long at = r.getResultAt().toEpochMilli();
            if (r.getMigratedToChatId() != null && !r.getMigratedToChatId().isBlank()) {
                return new Change(chat, null, r.getMigratedToChatId(), "delivery.results migrated to " + r.getMigratedToChatId(), at);
            }
            return switch (r.getStatus()) {
                case BLOCKED -> new Change(chat, false, null, "delivery.results BLOCKED"
                        + (r.getReason() == null ? "" : ": " + r.getReason()), at);
                case DELIVERED -> new Change(chat, true, null, "delivery.results DELIVERED", at);
                default -> null;
            };
        });
    }

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        super.init(context);
        store = context.getStateStore(SluiceTopology.CHAT_STATUS_STORE);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        if (record.value() == null) {
            return;
        }
        String topic = context().recordMetadata().map(m -> m.topic()).orElse("unknown");
        T value;
        try {
            value = deserializer.deserialize(topic, record.headers(), record.value());
        } catch (SchemaRegistryException e) {
            if (e.retriable()) {
                throw e;
            }
            log.warn("skipping unreadable record on {}: {}", topic, e.getMessage());
            return;
        } catch (RuntimeException e) {
            log.warn("skipping unreadable record on {}: {}", topic, e.getMessage());
            return;
        }
        String key = record.key() == null ? null : new String(record.key(), java.nio.charset.StandardCharsets.UTF_8);
        Change change = reader.change(key, value);
        if (change != null) {
            apply(change);
        }
    }

    private void apply(Change c) {
        ChatStatus current = store.get(c.chatId());
        if (current != null && current.getChangedAt().toEpochMilli() > c.at()) {
            return; // an older fact never overrides a newer one
        }
        boolean active = c.active() != null ? c.active() : current == null || current.getActive();
        String migratedTo = c.migratedTo() != null ? c.migratedTo() : current == null ? null : current.getMigratedToChatId();
        if (current != null && current.getActive() == active && java.util.Objects.equals(current.getMigratedToChatId(), migratedTo)) {
            return; // nothing changes: keep the changelog quiet (e.g. DELIVERED after DELIVERED)
        }
        if (current == null && active && migratedTo == null) {
            return; // active and not migrated is the default of an unknown chat
        }
        store.put(c.chatId(), ChatStatus.newBuilder().setChatId(c.chatId()).setActive(active)
                .setMigratedToChatId(migratedTo).setReason(c.reason()).setChangedAt(Instant.ofEpochMilli(c.at())).build());
    }
}
