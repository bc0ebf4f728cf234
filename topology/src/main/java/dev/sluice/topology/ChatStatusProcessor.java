package dev.sluice.topology;

import dev.sluice.avro.ChatEvent;
import dev.sluice.avro.ChatStatus;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.chat.ChatIds;
import java.time.Instant;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the chat status table ({@value SluiceTopology#CHAT_STATUS_STORE}, DESIGN.md Topology step 3) from
 * {@code chat.events} and {@code delivery.results}, both keyed by chat id and co-partitioned with the
 * {@code by-chat} repartition (same partition count). Status is per (bot, chat) ({@link ChatStatusTable}): the
 * fact's {@code bot_id} names the bot; {@code *} or blank in a chat event means every bot of the chat.
 * <ul>
 *   <li>ChatEvent ACTIVE (the user wrote to the bot) → active; BLOCKED or DEACTIVATED → inactive;
 *       MIGRATED → {@code migrated_to_chat_id} = the event's {@code new_chat_id};</li>
 *   <li>DeliveryResult BLOCKED → inactive for its bot; DELIVERED → active for its bot (the chat evidently works
 *       again); a result with {@code migrated_to_chat_id} → migrated, for the record's key (the old id: the
 *       fixed sender keys such a result by the old id with {@code chat_id} = old; a result that names its own
 *       chat as the new id, as the sender on main writes it, says nothing about the old id and is ignored).
 *       Other results (the topology's own SKIPPED_INACTIVE, EXPIRED and dead-letter FAILED, the sender's FAILED
 *       and UNCERTAIN) say nothing about the chat and are ignored.</li>
 * </ul>
 * Chat ids are normalised ({@link ChatIds}) first. A fact older than the one that set an entry's state
 * ({@code changed_at}) is ignored for that entry, so the two topics may interleave. A record that cannot be read
 * is logged and skipped (these topics are written by Sluice and the bot's backend); a retriable registry
 * failure is rethrown so the record is read again. Every write is told to {@link ChatStatusKeys} first (the routes answer
 * chats without an entry from memory). The store belongs to the task; its stream thread owns it.
 */
final class ChatStatusProcessor<T> extends ContextualProcessor<byte[], byte[], Void, Void> {
    private static final Logger log = LoggerFactory.getLogger(ChatStatusProcessor.class);

    /** A status change a record implies, or null for none; {@code botId} null: every bot. */
    record Change(String chatId, String botId, Boolean active, String migratedTo, String reason, long at) {
    }

    interface Reader<T> {
        Change change(String key, T value);
    }

    private final Deserializer<T> deserializer;
    private final Reader<T> reader;
    private final ChatStatusKeys keys;
    private KeyValueStore<String, ChatStatus> store;
    private ChatStatusKeys.Task chats;

    ChatStatusProcessor(Deserializer<T> deserializer, Reader<T> reader, ChatStatusKeys keys) {
        this.deserializer = deserializer;
        this.reader = reader;
        this.keys = keys;
    }

    private static String chatOf(String key, String fieldValue) {
        return ChatIds.normalise(key != null && !key.isBlank() ? key : fieldValue);
    }

    static ChatStatusProcessor<ChatEvent> fromChatEvents(Deserializer<ChatEvent> d, ChatStatusKeys keys) {
        return new ChatStatusProcessor<>(d, (key, e) -> {
            String chat = chatOf(key, e.getChatId());
            if (chat == null || chat.isEmpty()) {
                return null;
            }
            String bot = ChatStatusTable.everyBot(e.getBotId()) ? null : e.getBotId().strip();
            ChatEventValidator.Problem invalid = ChatEventValidator.problem(key, e);
            if (invalid != null) {
                log.warn("chat.events record skipped: {} (the rule sluice chat-event applies before writing)", invalid);
                return null;
            }
            long at = e.getAt().toEpochMilli();
            return switch (e.getType()) {
                case ACTIVE -> new Change(chat, bot, true, null, "chat.events ACTIVE (the user wrote to the bot)", at);
                case BLOCKED, DEACTIVATED -> new Change(chat, bot, false, null, "chat.events " + e.getType(), at);
                case MIGRATED -> {
                    String to = ChatIds.normalise(e.getNewChatId());
                    yield to == null || to.isEmpty() || to.equals(chat) ? null
                            : new Change(chat, bot, null, to, "chat.events MIGRATED to " + to, at);
                }
            };
        }, keys);
    }

    static ChatStatusProcessor<DeliveryResult> fromDeliveryResults(Deserializer<DeliveryResult> d, ChatStatusKeys keys) {
        return new ChatStatusProcessor<>(d, (key, r) -> {
            String chat = chatOf(key, r.getChatId());
            if (chat == null || chat.isEmpty()) {
                return null;
            }
            String bot = ChatStatusTable.everyBot(r.getBotId()) ? null : r.getBotId().strip();
            long at = r.getResultAt().toEpochMilli();
            String to = ChatIds.normalise(r.getMigratedToChatId());
            if (to != null && !to.isEmpty()) {
                return to.equals(chat) ? null
                        : new Change(chat, bot, null, to, "delivery.results migrated to " + to, at);
            }
            return switch (r.getStatus()) {
                case BLOCKED -> new Change(chat, bot, false, null, "delivery.results BLOCKED"
                        + (r.getReason() == null ? "" : ": " + r.getReason()) + (bot == null ? "" : " (bot " + bot + ")"), at);
                case DELIVERED -> new Change(chat, bot, true, null, "delivery.results DELIVERED", at);
                default -> null;
            };
        }, keys);
    }

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        super.init(context);
        store = context.getStateStore(SluiceTopology.CHAT_STATUS_STORE);
        chats = keys.forTask(context.taskId()); // the routes' in-memory chat set is loaded again from the restored store
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        T value = SideInputRecords.decodeOrSkip(deserializer, context(), record, log);
        if (value == null) {
            return; // a tombstone or an unreadable record (logged)
        }
        String key = record.key() == null ? null : new String(record.key(), java.nio.charset.StandardCharsets.UTF_8);
        Change change = reader.change(key, value);
        if (change != null) {
            apply(change);
        }
    }

    private void apply(Change c) {
        if (c.botId() != null) {
            String key = ChatStatusTable.key(c.chatId(), c.botId());
            ChatStatus own = store.get(key);
            // A bot's first own fact starts from what applies to every bot of the chat.
            applyTo(key, own != null ? own : store.get(c.chatId()), c);
            return;
        }
        applyTo(c.chatId(), store.get(c.chatId()), c);
        for (KeyValue<String, ChatStatus> e : ChatStatusTable.botEntries(store, c.chatId())) {
            applyTo(e.key, e.value, c);
        }
    }

    private void applyTo(String key, ChatStatus current, Change c) {
        if (current != null && current.getChangedAt().toEpochMilli() > c.at()) {
            return; // an older fact never overrides a newer one
        }
        boolean active = c.active() != null ? c.active() : current == null || current.getActive();
        String migratedTo = c.migratedTo() != null ? c.migratedTo() : current == null ? null : current.getMigratedToChatId();
        boolean unchanged = current == null ? active && migratedTo == null // the default of an unknown chat
                : current.getActive() == active && java.util.Objects.equals(current.getMigratedToChatId(), migratedTo);
        if (unchanged) {
            return; // keep the changelog quiet (e.g. DELIVERED after DELIVERED)
        }
        String bot = c.botId() != null ? c.botId() : current == null ? null : current.getBotId();
        chats.written(c.chatId());
        store.put(key, ChatStatus.newBuilder().setChatId(c.chatId()).setBotId(bot).setActive(active)
                .setMigratedToChatId(migratedTo).setReason(c.reason()).setChangedAt(Instant.ofEpochMilli(c.at())).build());
    }
}
