package dev.sluice.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class SluiceBindersTest {

    @Test
    void jvmMetersAreBound() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (AutoCloseable ignored = SluiceBinders.jvm(registry)) {
            assertThat(registry.find("jvm.memory.used").gauges()).isNotEmpty();
            assertThat(registry.find("jvm.threads.live").gauge()).isNotNull();
            assertThat(registry.find("process.uptime").timeGauge()).isNotNull();
        }
    }

    @Test
    void kafkaProducerMetricsAreBoundWithoutABroker() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // A producer creates its metrics at construction; no broker is contacted until the first send.
        try (var producer = new KafkaProducer<>(Map.<String, Object>of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1",
                ProducerConfig.CLIENT_ID_CONFIG, "binders-test"), new StringSerializer(), new StringSerializer());
             var bound = SluiceBinders.kafkaProducer(producer, registry)) {
            assertThat(registry.getMeters()).anyMatch(m -> m.getId().getName().startsWith("kafka.producer."));
        }
    }
}
