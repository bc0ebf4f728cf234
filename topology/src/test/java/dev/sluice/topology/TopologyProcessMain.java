package dev.sluice.topology;

import dev.sluice.config.Settings;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;

/**
 * A topology instance in its own JVM for {@link TwoInstanceKillIT}: reads a properties file, starts
 * {@link TopologyService}, prints {@code TOPOLOGY-RUNNING} once it runs and then runs until killed.
 */
public final class TopologyProcessMain {
    private TopologyProcessMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(Path.of(args[0]))) {
            p.load(r);
        }
        Map<String, String> values = new HashMap<>();
        p.stringPropertyNames().forEach(k -> values.put(k, p.getProperty(k)));
        TopologyService service = new TopologyService(TopologyConfig.from(Settings.of(values)));
        service.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (service.state() != KafkaStreams.State.RUNNING && System.nanoTime() < deadline) {
            Thread.sleep(50); // polling a state with a bound: the parent waits on this line
        }
        System.out.println(service.state() == KafkaStreams.State.RUNNING ? "TOPOLOGY-RUNNING" : "TOPOLOGY-NOT-RUNNING " + service.state());
        System.out.flush();
        Thread.currentThread().join(); // until kill -9
    }
}
