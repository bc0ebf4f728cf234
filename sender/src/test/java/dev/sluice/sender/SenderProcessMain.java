package dev.sluice.sender;

import dev.sluice.config.Settings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * A sender in its own JVM for crash tests: {@code java -cp <test classpath> dev.sluice.sender.SenderProcessMain
 * <properties file>}. Prints {@code SENDER-STARTED} once running and runs until the process is killed.
 */
public final class SenderProcessMain {
    private SenderProcessMain() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        Properties props = new Properties();
        try (Reader r = Files.newBufferedReader(Path.of(args[0]))) {
            props.load(r);
        }
        Map<String, String> m = new HashMap<>();
        props.forEach((k, v) -> m.put(k.toString(), v.toString()));
        SenderService sender = new SenderService(SenderConfig.from(Settings.of(m)), new SimpleMeterRegistry());
        sender.start();
        System.out.println("SENDER-STARTED");
        System.out.flush();
        new CountDownLatch(1).await(); // until killed
    }
}
