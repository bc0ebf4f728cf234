package dev.sluice.sender;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What this sender learned about chats from the provider's answers: chats that blocked a bot (or whose user
 * is deactivated) and groups that migrated to a supergroup id. The topology keeps the durable chat status
 * (from {@code delivery.results}); this is the sender's own view so that messages already buffered act on
 * it at once: no further calls to an inactive chat, and the lane follows a migration in order.
 *
 * <p>Bounded: the least recently used entries are forgotten past {@code maxEntries} (the topology still
 * knows them). Thread-safe.
 */
public final class ChatRegistry {
    private final Map<String, Boolean> inactive;
    private final Map<String, String> migrations;

    public ChatRegistry(int maxEntries) {
        this.inactive = lru(maxEntries);
        this.migrations = lru(maxEntries);
    }

    private static <V> Map<String, V> lru(int max) {
        return new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > max;
            }
        };
    }

    /** 403 blocked / deactivated: the bot may not write to this chat any more. */
    public synchronized void markInactive(String botId, String chatId) {
        inactive.put(botId + "|" + chatId, Boolean.TRUE);
    }

    public synchronized boolean isInactive(String botId, String chatId) {
        return inactive.get(botId + "|" + chatId) != null;
    }

    /** A group became a supergroup ({@code migrate_to_chat_id}): messages to {@code from} go to {@code to}. */
    public synchronized void migrate(String from, String to) {
        if (!from.equals(to)) {
            migrations.put(from, to);
        }
    }

    /** The chat id to send to now: follows migrations (a bounded chain), else {@code chatId} itself. */
    public synchronized String resolve(String chatId) {
        String current = chatId;
        for (int hops = 0; hops < 8; hops++) {
            String next = migrations.get(current);
            if (next == null) {
                return current;
            }
            current = next;
        }
        return current;
    }
}
