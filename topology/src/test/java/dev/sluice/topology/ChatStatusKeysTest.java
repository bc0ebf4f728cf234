package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.ChatStatus;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 session 9: the routes answer a chat without an entry in {@code chat-status-store} from memory, and never miss an
 * entry: one already in the (restored) store when the task's processors are initialised, or one written since.
 */
class ChatStatusKeysTest {
    private static final TaskId TASK = new TaskId(0, 3);

    @TempDir
    Path stateDir;
    private KeyValueStore<String, ChatStatus> rocks;
    /** {@link #rocks} with its {@code get} calls counted. */
    private KeyValueStore<String, ChatStatus> store;
    private final AtomicInteger reads = new AtomicInteger();

    @BeforeEach
    @SuppressWarnings("unchecked")
    void open() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-topology");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        MockProcessorContext<Void, Void> context = new MockProcessorContext<>(props, TASK, stateDir.toFile());
        rocks = Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SluiceTopology.CHAT_STATUS_STORE), Serdes.String(),
                new SpecificAvroSerde<>(new InMemorySchemaRegistryClient(), ChatStatus.class)).withLoggingDisabled().build();
        rocks.init(context.getStateStoreContext(), rocks);
        store = (KeyValueStore<String, ChatStatus>) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {KeyValueStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("get")) {
                        reads.incrementAndGet();
                    }
                    try {
                        return method.invoke(rocks, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @AfterEach
    void close() {
        rocks.close();
    }

    private static ChatStatus inactive(String chat, String bot) {
        return ChatStatus.newBuilder().setChatId(chat).setBotId(bot).setActive(false).setReason("blocked")
                .setChangedAt(Instant.parse("2026-03-02T10:00:00Z")).build();
    }

    @Test
    void entriesInTheStoreAtInitAreReadAndAChatWithoutOneIsAnsweredWithoutARead() {
        store.put(ChatStatusTable.key("42", "alerts"), inactive("42", "alerts")); // a bot's entry, restored
        store.put("43", inactive("43", null)); // an every-bot entry, restored
        ChatStatusKeys.Task chats = new ChatStatusKeys().forTask(TASK);

        assertThat(chats.get(store, "42", "alerts").getActive()).isFalse();
        assertThat(chats.get(store, "42", "other")).isNull(); // the chat has an entry, not for this bot: read, none
        assertThat(chats.get(store, "43", "alerts").getActive()).isFalse();
        int before = reads.get();
        for (int i = 0; i < 1_000; i++) {
            assertThat(chats.get(store, "chat-" + i, "alerts")).isNull();
        }
        assertThat(reads.get()).as("chats without an entry read no store").isEqualTo(before);
    }

    @Test
    void aWriteToldAfterTheSetWasLoadedIsSeen() {
        ChatStatusKeys keys = new ChatStatusKeys();
        ChatStatusKeys.Task route = keys.forTask(TASK);
        assertThat(route.get(store, "42", "alerts")).isNull(); // loads the (empty) set
        assertThat(route.loaded()).isTrue();

        // what ChatStatusProcessor does: tell, then write; the route of the same task sees it at once
        ChatStatusKeys.Task writer = keys.forTask(TASK);
        route = keys.forTask(TASK);
        assertThat(route.get(store, "41", "alerts")).isNull();
        writer.written("42");
        store.put(ChatStatusTable.key("42", "alerts"), inactive("42", "alerts"));
        assertThat(route.get(store, "42", "alerts").getActive()).isFalse();
    }

    @Test
    void initialisingTheTaskAgainForgetsTheSetSoWhatARestoreWroteIsSeen() {
        ChatStatusKeys keys = new ChatStatusKeys();
        ChatStatusKeys.Task route = keys.forTask(TASK);
        assertThat(route.get(store, "42", "alerts")).isNull();
        // written past the processors (a restore after the task was corrupted, or a standby): then the task's processors
        // are initialised again
        store.put("42", inactive("42", null));
        route = keys.forTask(TASK);
        assertThat(route.loaded()).isFalse();
        assertThat(route.get(store, "42", "alerts").getActive()).isFalse();
    }
}
