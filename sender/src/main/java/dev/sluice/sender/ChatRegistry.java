package dev.sluice.sender;

import dev.sluice.chat.ChatIds;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What this sender learned about chats from the provider's answers: (bot, chat) pairs where the chat blocked the
 * bot (or its user is deactivated), and groups that migrated to a supergroup id. The topology keeps the durable
 * chat status per (bot, chat) (from {@code delivery.results} and {@code chat.events}); this is the sender's own
 * view, so that messages already buffered act on it at once: no further calls to a chat that just refused the
 * bot, and a lane follows a migration in order.
 *
 * <p><b>Per (bot, chat).</b> A 403 says the chat refuses that bot only: bot B still sends to a chat that blocked
 * bot A, and a delivery by B says nothing about A. A delivery by A itself clears A's mark. A migration is a fact
 * about the chat (its id changed for every bot), so it is kept per chat.
 *
 * <p><b>Dated marks.</b> A mark learned at time T (this sender's clock when the 403 came back) applies only to
 * messages whose {@code due_at} (when the topology released them) is at or before T. Those were released before
 * anyone could know of the block, so they are skipped without a call. A message released after T was released by
 * a topology that either had not yet read the BLOCKED result (it then costs one more call, which answers 403
 * again and renews the mark) or knows the chat is active again (a {@code chat.events} ACTIVE: the user wrote to
 * the bot); in both cases the call is the right thing, so an ACTIVE takes effect without restarting the sender,
 * which does not read {@code chat.events} itself. The topology's clock stamps {@code due_at} and this sender's
 * stamps T: a skew between them only moves the line for messages released within the skew of the 403.
 *
 * <p><b>Bounded.</b> At most {@code maxEntries} marks and migrations each (least recently used forgotten first),
 * and a mark lapses {@code ttl} (1 h by default) after it was learned; the topology still knows. Chat ids are
 * normalised ({@link ChatIds}) before they key anything.
 *
 * <p>Thread-safe: the sending threads share it; all state is under this object's monitor.
 */
public final class ChatRegistry {
    /** Default life of an inactive mark. */
    public static final Duration DEFAULT_TTL = Duration.ofHours(1);

    private record BotChat(String bot, String chat) {
    }

    private final Map<BotChat, Long> inactiveSince;
    private final Map<String, String> migrations;
    private final long ttlMs;

    /** At most {@code maxEntries} of each; marks live {@link #DEFAULT_TTL}. */
    public ChatRegistry(int maxEntries) {
        this(maxEntries, DEFAULT_TTL);
    }

    /** Times are the caller's (the delivery processor's clock): the registry reads no clock itself. */
    public ChatRegistry(int maxEntries, Duration ttl) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be positive, was " + maxEntries);
        }
        this.inactiveSince = lru(maxEntries);
        this.migrations = lru(maxEntries);
        this.ttlMs = ttl.toMillis();
    }

    private static <K, V> Map<K, V> lru(int max) {
        return new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > max;
            }
        };
    }

    private static BotChat key(String botId, String chatId) {
        return new BotChat(botId, ChatIds.normalise(chatId));
    }

    /** 403 blocked / deactivated at {@code atMs}: the chat refuses this bot for messages due until then. */
    public synchronized void markInactive(String botId, String chatId, long atMs) {
        inactiveSince.merge(key(botId, chatId), atMs, Math::max);
    }

    /** The bot delivered to the chat: whatever this sender marked for the pair no longer holds. */
    public synchronized void markActive(String botId, String chatId) {
        inactiveSince.remove(key(botId, chatId));
    }

    /**
     * Whether a message of {@code botId} to {@code chatId} released at {@code dueAtMs} is skipped at {@code nowMs}:
     * a mark of the pair learned at or after its release and not older than the TTL.
     */
    public synchronized boolean isInactive(String botId, String chatId, long dueAtMs, long nowMs) {
        BotChat k = key(botId, chatId);
        Long since = inactiveSince.get(k);
        if (since == null) {
            return false;
        }
        if (nowMs - since > ttlMs) {
            inactiveSince.remove(k);
            return false;
        }
        return dueAtMs <= since;
    }

    /** Whether a mark of the pair is held at {@code nowMs}, whatever a message's release time. */
    public boolean isInactive(String botId, String chatId, long nowMs) {
        return isInactive(botId, chatId, Long.MIN_VALUE, nowMs);
    }

    /** A group became a supergroup ({@code migrate_to_chat_id}): messages to {@code from} go to {@code to}. */
    public synchronized void migrate(String from, String to) {
        String f = ChatIds.normalise(from);
        String t = ChatIds.normalise(to);
        if (!f.equals(t)) {
            migrations.put(f, t);
        }
    }

    /** The chat id to send to now: follows migrations (a bounded chain), else the normalised {@code chatId}. */
    public synchronized String resolve(String chatId) {
        String current = ChatIds.normalise(chatId);
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
