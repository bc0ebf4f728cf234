package dev.sluice.topology;

import dev.sluice.avro.ChatStatus;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Which chats have an entry in a task's {@value SluiceTopology#CHAT_STATUS_STORE}, kept in memory (issue 21 session 9): the
 * route read the store twice per notification ({@link ChatStatusTable#get}: the bot's entry, then the every-bot entry), a
 * RocksDB get each, though almost every chat has no entry (a chat is active until a fact says otherwise, and
 * {@link ChatStatusProcessor} writes nothing for a fact that changes nothing). Per task, a set of 64-bit hashes of the chat
 * ids that have an entry ({@link SeenIds#hash}); a chat whose hash is not in it has no entry and is answered without a store
 * read; one whose hash is in it (an entry, or rarely another chat with the same hash) is read as before. The set only grows
 * (a superset is safe: it costs a read, never a wrong answer), about 16 bytes per chat with a status in the task.
 *
 * <p>Kept right: every processor connected to the store ({@code <lane>-route}, {@code chat-events-to-status},
 * {@code delivery-results-to-status}) calls {@link #forTask} from its {@code init}, which forgets the task's set; Kafka Streams
 * initialises all processors of a task after restoring its stores (at start, after a rebalance, after a task was corrupted
 * and restored), so the next lookup loads the set from the restored store, and from then on the task's only writers are
 * those processors, which tell every write ({@link Task#written}) before it. One instance per built topology (shared by its
 * stream threads: a map of tasks); a task's {@link Task} is used by the stream thread that owns the task.
 */
final class ChatStatusKeys {
    private final ConcurrentHashMap<TaskId, Task> tasks = new ConcurrentHashMap<>();

    /** The task's set, forgotten (loaded again from the store at the next lookup); call from a processor's {@code init}. */
    Task forTask(TaskId task) {
        Task t = tasks.computeIfAbsent(task, id -> new Task());
        t.chats = null;
        return t;
    }

    /** One task's chats with an entry in the store. */
    static final class Task {
        private LongSet chats;

        /** Before a write of {@code chat}'s entry (any bot's) to the store. */
        void written(String chat) {
            if (chats != null) {
                chats.add(SeenIds.hash(chat));
            }
        }

        /** The status that applies to {@code botId} in {@code chat} ({@link ChatStatusTable#get}), read only when it may exist. */
        ChatStatus get(KeyValueStore<String, ChatStatus> store, String chat, String botId) {
            if (chats == null) {
                chats = load(store);
            }
            return chats.contains(SeenIds.hash(chat)) ? ChatStatusTable.get(store, chat, botId) : null;
        }

        /** Whether the set is loaded (tests). */
        boolean loaded() {
            return chats != null;
        }

        private static LongSet load(KeyValueStore<String, ChatStatus> store) {
            LongSet set = new LongSet();
            try (KeyValueIterator<String, ChatStatus> it = store.all()) {
                while (it.hasNext()) {
                    KeyValue<String, ChatStatus> kv = it.next();
                    int sep = kv.key.indexOf(ChatStatusTable.SEPARATOR);
                    set.add(SeenIds.hash(sep < 0 ? kv.key : kv.key.substring(0, sep)));
                }
            }
            return set;
        }
    }
}
