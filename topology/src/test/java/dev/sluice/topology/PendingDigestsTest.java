package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DigestEntry;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
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
 * Issue 21 session 10: the route builds a notification's {@link DigestKey} only when its chat has a pending entry
 * ({@link PendingDigests#holdsChat}), so that answer must follow every entry: restored ones, puts and deletes.
 */
class PendingDigestsTest {
    @TempDir
    Path stateDir;
    private KeyValueStore<String, DigestEntry> store;

    @BeforeEach
    void open() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-topology");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        MockProcessorContext<Void, Void> context = new MockProcessorContext<>(props, new TaskId(0, 1), stateDir.toFile());
        store = Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("live-digest-store"), Serdes.String(),
                new SpecificAvroSerde<>(new InMemorySchemaRegistryClient(), DigestEntry.class)).withLoggingDisabled().build();
        store.init(context.getStateStoreContext(), store);
    }

    @AfterEach
    void close() {
        store.close();
    }

    private static Notification notification(String chat, String kind) {
        return Notification.newBuilder().setId("n-" + chat + kind).setBotId("alerts").setChatId(chat).setKind(kind)
                .setEventClass(NotificationClass.ROUTINE).setText("t").setCreatedAt(Instant.EPOCH).build();
    }

    private static DigestEntry entry(Notification n) {
        return DigestEntry.newBuilder().setBotId(n.getBotId()).setChatId(n.getChatId()).setKind(n.getKind()).setEntity(null)
                .setEventClass(NotificationClass.ROUTINE).setCount(1).setFirstAt(Instant.EPOCH).setLastAt(Instant.EPOCH)
                .setFoldedAt(Instant.EPOCH).setLatest(n).setFoldedIds(List.of(n.getId())).setDigestId("d-" + n.getId()).build();
    }

    @Test
    void theChatOfAKeyIsItsFirstPartWhateverItHolds() {
        for (String chat : List.of("42", "-100123", "@chan", "12:3|x", "")) {
            assertThat(DigestKey.chatOf(DigestKey.of(notification(chat, "k|1:2"), chat))).isEqualTo(chat);
        }
    }

    @Test
    void aChatHoldsWhileOneOfItsKeysIsPendingRestoredOrPut() {
        assertThat(DigestKey.chatAndBotOf(DigestKey.of(notification("12:3|x", "k"), "12:3|x")))
                .isEqualTo(DigestKey.chatAndBot("12:3|x", "alerts"));
        Notification restored = notification("7", "task.assigned");
        store.put(DigestKey.of(restored, "7"), entry(restored)); // left pending by a previous run
        PendingDigests digests = new PendingDigests(store);
        assertThat(digests.holdsChat("7", "alerts")).isTrue();
        assertThat(digests.holdsChat("7", "news")).as("another bot's conversation with the user").isFalse();
        assertThat(digests.holdsChat("8", "alerts")).isFalse();

        Notification a = notification("12:3|x", "task.assigned");
        Notification b = notification("12:3|x", "task.closed");
        String keyA = DigestKey.of(a, "12:3|x");
        String keyB = DigestKey.of(b, "12:3|x");
        assertThat(digests.holdsChat("12:3|x", "alerts")).isFalse();
        digests.put(keyA, entry(a));
        digests.put(keyA, entry(a)); // the same key again (folding further): still one key
        digests.put(keyB, entry(b));
        assertThat(digests.holdsChat("12:3|x", "alerts")).isTrue();
        assertThat(digests.holdsChat("12", "alerts")).isFalse();
        digests.delete(keyA);
        assertThat(digests.holdsChat("12:3|x", "alerts")).as("keyB still pending").isTrue();
        digests.delete(keyA); // not pending any more: changes nothing
        assertThat(digests.holdsChat("12:3|x", "alerts")).isTrue();
        digests.delete(keyB);
        assertThat(digests.holdsChat("12:3|x", "alerts")).isFalse();
        digests.delete(DigestKey.of(restored, "7"));
        assertThat(digests.holdsChat("7", "alerts")).isFalse();
        assertThat(digests.size()).isZero();
    }

    /**
     * Session 17: a chat's digests leave in the order of their latest folds. After a restart the store holds entries
     * folded by the previous run; an entry folded now must sort after them even in the same millisecond (or on an
     * instance whose clock is behind), and entries of one millisecond leave by fold order, not key order.
     */
    @Test
    void foldOrderContinuesAfterTheRestoredEntriesAndBeatsKeyOrderWithinAMillisecond() {
        Notification restored = notification("7", "z.kind"); // key sorts last
        DigestEntry old = entry(restored);
        old.setFoldSeq(41);
        store.put(DigestKey.of(restored, "7"), old);
        PendingDigests digests = new PendingDigests(store);
        long seq = digests.nextFoldSeq();
        assertThat(seq).as("after the restored 41").isEqualTo(42);

        Notification later = notification("7", "a.kind"); // key sorts first, same folded_at
        DigestEntry opened = entry(later);
        opened.setFoldSeq(seq);
        digests.put(DigestKey.of(later, "7"), opened);
        Notification other = notification("8", "a.kind");
        DigestEntry otherChat = entry(other);
        otherChat.setFoldSeq(digests.nextFoldSeq());
        digests.put(DigestKey.of(other, "8"), otherChat);
        assertThat(digests.inLeavingOrder()).extracting(kv -> kv.value.getLatest().getId())
                .containsExactly(restored.getId(), later.getId(), other.getId());

        Notification full = notification("7", "m.kind");
        DigestEntry fullEntry = entry(full);
        fullEntry.setFoldSeq(digests.nextFoldSeq());
        assertThat(digests.removeLeavingBefore(DigestKey.of(full, "7"), fullEntry)).extracting(kv -> kv.value.getLatest().getId())
                .as("chat 7's older entries, in opening order; chat 8's stays").containsExactly(restored.getId(), later.getId());
        assertThat(digests.holdsChat("7", "alerts")).isFalse();
        assertThat(digests.holdsChat("8", "alerts")).isTrue();
    }
}
