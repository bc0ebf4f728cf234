package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedKafkaStreamsIT {

    @Test
    void kafkaStreamsRunsWithExactlyOnceV2AndAStateStore(@TempDir Path stateDir) throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            kafka.createTopics(2, "in", "out");

            StreamsBuilder builder = new StreamsBuilder();
            builder.stream("in", Consumed.with(Serdes.String(), Serdes.String()))
                    .groupByKey()
                    .count() // a changelogged store: exercises transactions on internal topics too
                    .toStream()
                    .mapValues(Object::toString)
                    .to("out", Produced.with(Serdes.String(), Serdes.String()));
            Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, "eos-check");
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
            props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
            props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
            props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);

            try (KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
                streams.start();
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
                    for (String key : List.of("a", "b", "a")) {
                        producer.send(new ProducerRecord<>("in", key, "x")).get();
                    }
                }
                assertThat(readCommitted(kafka, "out", 3)).containsExactlyInAnyOrder("a=1", "b=1", "a=2");
                streams.close(Duration.ofSeconds(20));
            }
        }
    }

    private static List<String> readCommitted(EmbeddedKafka kafka, String topic, int expected) {
        List<String> seen = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "reader",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (seen.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    seen.add(r.key() + "=" + r.value());
                }
            }
        }
        return seen;
    }
}
