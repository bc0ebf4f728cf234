package dev.sluice.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;

/**
 * Third-party meters every Sluice process exposes next to its own: JVM (memory, GC, threads, class
 * loading, CPU, uptime) and Kafka client metrics (Micrometer's {@link KafkaClientMetrics}, which
 * re-reads the client's metric set so new per-partition metrics appear). Kafka Streams uses
 * {@code io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics} the same way (bound where the
 * {@code KafkaStreams} instance lives, since this module does not depend on kafka-streams). Lettuce:
 * {@code ClientResources.builder().commandLatencyRecorder(new MicrometerCommandLatencyRecorder(registry,
 * MicrometerOptions.create()))}.
 */
public final class SluiceBinders {
    private SluiceBinders() {
    }

    /** Binds the JVM and process meters; close the result on shutdown (it stops the GC listener). */
    public static AutoCloseable jvm(MeterRegistry registry) {
        new ClassLoaderMetrics().bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        return gc;
    }

    /** Binds a consumer's metrics; close the result before the consumer. */
    public static KafkaClientMetrics kafkaConsumer(Consumer<?, ?> consumer, MeterRegistry registry) {
        KafkaClientMetrics m = new KafkaClientMetrics(consumer);
        m.bindTo(registry);
        return m;
    }

    /** Binds a producer's metrics; close the result before the producer. */
    public static KafkaClientMetrics kafkaProducer(Producer<?, ?> producer, MeterRegistry registry) {
        KafkaClientMetrics m = new KafkaClientMetrics(producer);
        m.bindTo(registry);
        return m;
    }

    /** Binds an admin client's metrics; close the result before the client. */
    public static KafkaClientMetrics kafkaAdmin(AdminClient admin, MeterRegistry registry) {
        KafkaClientMetrics m = new KafkaClientMetrics(admin);
        m.bindTo(registry);
        return m;
    }
}
