package dev.sluice.app.dev;

import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.io.PrintWriter;
import java.nio.file.Path;
import org.apache.kafka.server.fault.ProcessTerminatingFaultHandler;

/**
 * A child JVM for {@link DevFatalFaultIT}: starts a redis-server as {@code sluice dev} does, prints its PID, then (with
 * {@code install}) installs {@link DevCommand#installFatalExit} and lets Kafka's own {@link ProcessTerminatingFaultHandler}
 * end the JVM as the embedded broker's raft thread does on a fatal fault. Without {@code install} it shows the old
 * behaviour: the JVM halts silently and redis-server stays.
 */
public final class FatalFaultMain {
    private FatalFaultMain() {
    }

    public static void main(String[] args) {
        RedisInstance redis = RedisLauncher.localProcess().launchAt(0, null);
        System.out.println("redis pid " + redis.pid());
        System.out.flush();
        if (args.length > 0 && args[0].equals("install")) {
            DevCommand.installFatalExit(new PrintWriter(System.err, true), Path.of("sluice-dev.log"));
        }
        new ProcessTerminatingFaultHandler.Builder().build()
                .handleFault("Encountered fatal fault: test", new IllegalStateException("test fault"));
        System.out.println("still running");
    }
}
