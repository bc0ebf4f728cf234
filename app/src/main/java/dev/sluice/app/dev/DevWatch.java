package dev.sluice.app.dev;

import dev.sluice.metrics.SluiceMetrics;
import dev.sluice.testkit.RedisInstance;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What changes under a running {@code sluice dev} that nobody asked for, said on its console (the framework logs go to a
 * file): its redis-server exited, or a sender's budget mode changed (shared → fallback_local or paused when Redis is
 * lost, and back). Without it, a dead Redis showed nothing where the developer looks: the senders went on at their
 * share of the rate, or sent nothing.
 *
 * <p>Threads: {@link #check} runs on the watch's own daemon timer thread ({@code sluice-dev-watch}), every
 * {@value #PERIOD_MS} ms, and owns the last seen state; {@link #close} stops it (before the stack stops, so an ordered
 * stop is not reported as a fault).
 */
final class DevWatch implements AutoCloseable {
    static final long PERIOD_MS = 1_000;

    private final RedisInstance redis;
    private final List<MeterRegistry> senders;
    private final Consumer<String> say;
    /** Per sender, its budget mode at the last check (lower case, as the gauge's tag); null before the first. */
    private final List<String> modes = new ArrayList<>();
    private boolean redisGone;
    private ScheduledExecutorService timer;

    /**
     * @param redis   the stack's Redis (null with {@code --budget local})
     * @param senders each sender's registry, in sender order (sender 1 first)
     * @param say     one line to the console
     */
    DevWatch(RedisInstance redis, List<MeterRegistry> senders, Consumer<String> say) {
        this.redis = redis;
        this.senders = List.copyOf(senders);
        this.say = say;
        senders.forEach(s -> modes.add(null));
    }

    synchronized void start() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-dev-watch");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(() -> {
            try {
                check();
            } catch (RuntimeException e) { // a throwing task would be cancelled: the watch would fall silent
                say.accept("watch: " + e);
            }
        }, 0, PERIOD_MS, TimeUnit.MILLISECONDS);
    }

    /** One look: the Redis process, then every sender's budget mode. */
    void check() {
        if (redis != null && redis.isManaged() && !redis.isRunning() && !redisGone) {
            redisGone = true;
            say.accept("redis-server (port " + redis.port() + ") exited: the senders cannot reach the shared budget; "
                    + "they decide alone (budget.redis.outage.mode) until it is back. Stop (Ctrl-C) and start sluice dev "
                    + "again to get Redis back (with --data-dir its data is kept)");
        }
        for (int i = 0; i < senders.size(); i++) {
            String mode = modeOf(senders.get(i));
            String before = modes.get(i);
            modes.set(i, mode);
            if (before != null && mode != null && !before.equals(mode)) {
                say.accept(String.format(Locale.ROOT, "sender %d: budget mode %s -> %s%s", i + 1, before, mode,
                        meaning(mode)));
            }
        }
    }

    /** The mode whose {@code sluice_budget_mode} gauge is 1, lower case; null if none is. */
    static String modeOf(MeterRegistry registry) {
        for (Gauge g : registry.find(SluiceMetrics.BUDGET_MODE).gauges()) {
            if (g.value() == 1.0) {
                return g.getId().getTag("mode");
            }
        }
        return null;
    }

    private static String meaning(String mode) {
        return switch (mode) {
            case "fallback_local" -> " (Redis unreachable: it decides alone at its share of the rate)";
            case "paused" -> " (Redis unreachable and budget.redis.outage.mode=fail-closed: it sends nothing)";
            case "shared" -> " (the shared budget in Redis again)";
            default -> "";
        };
    }

    @Override
    public synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
            try {
                timer.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
