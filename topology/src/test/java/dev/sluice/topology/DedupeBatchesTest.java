package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * Issue 21, session 11, on the TopologyTestDriver (which commits after every input record): a lane's ids reach the
 * changelog in batch records of {@code <lane>-dedupe-batches}, written by the record cache at the commit, and none in
 * {@code <lane>-dedupe-store}'s; duplicates are caught within {@code dedupe.window.ms} and not after it.
 */
class DedupeBatchesTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");
    private static final String CHANGELOG = "sluice-topology-live-dedupe-batches-changelog";
    private static final String PER_ID_CHANGELOG = "sluice-topology-live-dedupe-store-changelog";

    @Test
    void everyRememberedIdIsInTheBatchChangelogAtTheCommitAndNoneInThePerIdOne() {
        h = new Harness(stateDir, TEN, Map.of());
        TestOutputTopic<byte[], byte[]> batches = h.driver.createOutputTopic(CHANGELOG, new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        TestOutputTopic<byte[], byte[]> perId = h.driver.createOutputTopic(PER_ID_CHANGELOG, new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        List<String> logged = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            h.send(notification("c-" + i, "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
            // the test driver committed after the record: the open batch, with this id, is in the changelog now
            List<String> ids = new ArrayList<>();
            for (TestRecord<byte[], byte[]> r : batches.readRecordsToList()) {
                ids.clear();
                SeenIds.decode(r.value(), 0, (id, t) -> ids.add(id));
            }
            // the key names the chat (RouteDedupe#key)
            assertThat(ids).as("the last batch record after c-%d", i).endsWith("42\u001Ec-" + i);
            logged.addAll(ids.subList(ids.size() - 1, ids.size()));
        }
        assertThat(logged).hasSize(20).doesNotHaveDuplicates();
        assertThat(perId.isEmpty()).isTrue();
        h.send(notification("c-3", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).hasSize(20).doesNotHaveDuplicates();
        assertThat(h.counts.get("live.duplicates")).isEqualTo(1);
        assertThat(batches.isEmpty()).as("a duplicate writes nothing").isTrue();
    }

    @Test
    void aDuplicateIsCaughtWithinTheWindowAndNotAfterIt() {
        h = new Harness(stateDir, TEN, Map.of("dedupe.window.ms", "60000"));
        h.send(notification("w-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.advance(Duration.ofSeconds(59));
        h.send(notification("w-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.counts.get("live.duplicates")).isEqualTo(1);
        h.advance(Duration.ofSeconds(2)); // 61 s after the first copy
        h.send(notification("w-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.counts.get("live.duplicates")).as("outside the window it is new").isEqualTo(1);
        h.advance(Duration.ofSeconds(30));
        h.send(notification("w-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.counts.get("live.duplicates")).as("and a duplicate of its new copy within the window").isEqualTo(2);
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("w-1", "w-1");
    }

    @Test
    void withoutTheRecordCacheEveryIdIsWrittenOnceToThePerIdStoreAndNoBatchIsWritten() {
        // a batch put without the cache would reach the changelog at once, its whole batch rewritten per id
        h = new Harness(stateDir, TEN, Map.of("kafka.statestore.cache.max.bytes", "0"));
        TestOutputTopic<byte[], byte[]> batches = h.driver.createOutputTopic(CHANGELOG, new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        TestOutputTopic<byte[], byte[]> perId = h.driver.createOutputTopic(PER_ID_CHANGELOG, new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        for (int i = 0; i < 20; i++) {
            h.send(notification("n-" + i, "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        }
        assertThat(perId.readRecordsToList()).as("one per-id record per id").hasSize(20);
        assertThat(batches.isEmpty()).isTrue();
        h.send(notification("n-7", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.counts.get("live.duplicates")).isEqualTo(1);
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).hasSize(20).doesNotHaveDuplicates();
    }

    @Test
    void theRecordCacheIsOffWhenEitherCacheSizeIsZero() {
        assertThat(SeenIds.recordCacheOn(Map.of("statestore.cache.max.bytes", 10_485_760L,
                "cache.max.bytes.buffering", 10_485_760L))).isTrue();
        assertThat(SeenIds.recordCacheOn(Map.of())).isTrue();
        assertThat(SeenIds.recordCacheOn(Map.of("statestore.cache.max.bytes", 0L))).isFalse();
        assertThat(SeenIds.recordCacheOn(Map.of("statestore.cache.max.bytes", "0"))).isFalse();
        assertThat(SeenIds.recordCacheOn(Map.of("statestore.cache.max.bytes", 10_485_760L,
                "cache.max.bytes.buffering", 0L))).isFalse();
    }
}
