package dev.sluice.app;

import java.util.concurrent.CountDownLatch;

/** Blocks a long-running command until the JVM is asked to stop (SIGTERM / Ctrl-C), then closes it. */
final class Shutdown {
    private Shutdown() {
    }

    static void awaitThenClose(AutoCloseable service, String name) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                service.close();
            } catch (Exception e) {
                System.err.println(name + ": error while stopping: " + e.getMessage());
            } finally {
                stopped.countDown();
            }
        }, name + "-shutdown"));
        stopped.await();
    }
}
