package dev.sluice.topology;

import dev.sluice.avro.ChatStatus;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The keys of {@value SluiceTopology#CHAT_STATUS_STORE}: chat status is kept per (bot, chat).
 * <ul>
 *   <li>{@code <chat>}: the status for every bot of the chat, set by facts without a bot ({@code bot_id} {@code *}
 *       or blank in {@code chat.events}); entries written before statuses were per bot read the same way;</li>
 *   <li>{@code <chat>U+001F<bot>}: the status for one bot. It starts as a copy of the every-bot entry and takes
 *       that bot's own facts; a later every-bot fact is applied to it as well (newer fact wins, per entry).</li>
 * </ul>
 * A lookup reads the bot's entry, else the every-bot entry. The validator rejects control characters in chat
 * ids, so the separator is unambiguous. Static helpers over a store owned by the task's stream thread.
 */
final class ChatStatusTable {
    /** Joins chat and bot in a key; a control character, which no valid chat id contains. */
    static final char SEPARATOR = '\u001F';
    /** {@code bot_id} of a fact that applies to every bot of the chat. */
    static final String EVERY_BOT = "*";

    private ChatStatusTable() {
    }

    /** True when a fact names no bot: {@code *}, blank or null. */
    static boolean everyBot(String botId) {
        return botId == null || botId.isBlank() || EVERY_BOT.equals(botId.strip());
    }

    /** The key of {@code chat}'s entry for {@code botId}, or for every bot when {@link #everyBot}. */
    static String key(String chat, String botId) {
        return everyBot(botId) ? chat : chat + SEPARATOR + botId.strip();
    }

    /** The status that applies to {@code botId} in {@code chat}, or null when nothing is known (active). */
    static ChatStatus get(KeyValueStore<String, ChatStatus> store, String chat, String botId) {
        if (!everyBot(botId)) {
            ChatStatus own = store.get(key(chat, botId));
            if (own != null) {
                return own;
            }
        }
        return store.get(chat);
    }

    /** Every per-bot entry of {@code chat} (key and value). */
    static java.util.List<KeyValue<String, ChatStatus>> botEntries(KeyValueStore<String, ChatStatus> store, String chat) {
        java.util.List<KeyValue<String, ChatStatus>> out = new java.util.ArrayList<>();
        try (KeyValueIterator<String, ChatStatus> it = store.prefixScan(chat + SEPARATOR, new StringSerializer())) {
            it.forEachRemaining(out::add);
        }
        return out;
    }
}
