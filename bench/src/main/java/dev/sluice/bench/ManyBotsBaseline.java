package dev.sluice.bench;

import dev.sluice.testkit.TelegramLimiter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Issue 19: the bare-baseline half of {@code many-bots}. After the real senders of a run stopped, the same number of
 * {@link BareSender} JVMs (same heap, GC and JVM options) drain the same {@code outbox.live} backlog from its start
 * under their own consumer group, against the same FakeTelegram and its limits, and the same figures are measured over
 * a window of the same length after a warm-up by the same rule (the JIT settled, {@link JitCpu.Settle}): delivered/s, the children's CPU per delivered message, Redis
 * commands (every client command and script-internal call from {@code INFO commandstats}; the baseline makes none) and
 * redis-server CPU per delivered message, and the 429s FakeTelegram answered them (the whole baseline run), with the
 * scope of each (the bot's sliding second, a chat, a group, or a penalty of one of them the call met).
 *
 * <p>Single-threaded (the bench's main thread); holds nothing between calls.
 */
final class ManyBotsBaseline {
    /** What the baseline measured; {@code windowStartMs..windowEndMs} is its window (epoch ms, for JFR). */
    record Figures(int processes, double ratePerBot, double perS, double cpuMsPerMsg, double cpuCores,
                   double redisCommandsPerMsg, double redisUsPerMsg, long p429,
                   Map<TelegramLimiter.Scope, Long> p429ByScope, long windowStartMs, long windowEndMs,
                   double jitCpuShare, JitCpu.Settle.Warmed warmed) {
    }

    private ManyBotsBaseline() {
    }

    /**
     * @param senderSettings the real senders' settings (broker, registry, FakeTelegram, timeouts, buffer bounds)
     * @param ratePerBot     each bot's rate over all baseline processes, msg/s (each paces at its share)
     * @param backlog        the messages the outbox holds for the bench (every bot's backlog): the window must end before it is drained
     */
    static Figures measure(Infra infra, SenderProcess.Kind kind, Map<String, String> senderSettings,
                           Map<String, String> tokens, int processes, double ratePerBot, JitCpu.Settle settle, int seconds,
                           List<RedisProbe> shards, long backlog) throws Exception {
        Map<String, String> settings = new LinkedHashMap<>(senderSettings);
        settings.put("sender.group.id", "sluice-bare-bench");
        settings.put(BareSender.RATE_KEY, String.format(Locale.ROOT, "%.4f", ratePerBot / processes));
        long p429Before = infra.telegram.rejected429Count();
        long acceptedBefore = infra.telegram.accepted().size();
        Map<TelegramLimiter.Scope, Long> byScopeBefore = infra.telegram.rejected429ByScope();
        Figures f;
        try (Senders s = Senders.start(kind, "bare", processes, settings, tokens, infra.workDir, "512m")) {
            JitCpu.Settle.Warmed warmed = settle.warm(s::cpu, s.pids()); // JIT, partition assignment, every bot paced
            long accepted0 = infra.telegram.accepted().size();
            long cpu0 = s.cpu().toMillis();
            long jit0 = JitCpu.of(s.pids()).toMillis();
            double redisCpu0 = RedisProbe.cpuSeconds(shards);
            long calls0 = RedisProbe.totalCalls(shards);
            long start = System.currentTimeMillis();
            long t0 = System.nanoTime();
            Thread.sleep(seconds * 1000L); // the measured window
            long accepted1 = infra.telegram.accepted().size();
            long cpu1 = s.cpu().toMillis();
            long jit1 = JitCpu.of(s.pids()).toMillis();
            double redisCpu1 = RedisProbe.cpuSeconds(shards);
            long calls1 = RedisProbe.totalCalls(shards);
            double window = (System.nanoTime() - t0) / 1e9;
            ManyBots.requireBacklogLeft(accepted1 - acceptedBefore, backlog, "the baseline", "measured window");
            long delivered = accepted1 - accepted0;
            f = new Figures(processes, ratePerBot, delivered / window,
                    delivered == 0 ? 0 : (double) (cpu1 - cpu0) / delivered, (cpu1 - cpu0) / 1000.0 / window,
                    delivered == 0 ? 0 : (double) (calls1 - calls0) / delivered,
                    delivered == 0 ? 0 : (redisCpu1 - redisCpu0) * 1e6 / delivered, 0, Map.of(), start,
                    System.currentTimeMillis(), JitCpu.share(jit1 - jit0, cpu1 - cpu0), warmed);
        }
        Map<TelegramLimiter.Scope, Long> byScope = new java.util.EnumMap<>(TelegramLimiter.Scope.class);
        infra.telegram.rejected429ByScope().forEach((scope, n) -> {
            long d = n - byScopeBefore.getOrDefault(scope, 0L);
            if (d > 0) {
                byScope.put(scope, d);
            }
        });
        return new Figures(f.processes(), f.ratePerBot(), f.perS(), f.cpuMsPerMsg(), f.cpuCores(),
                f.redisCommandsPerMsg(), f.redisUsPerMsg(), infra.telegram.rejected429Count() - p429Before, byScope,
                f.windowStartMs(), f.windowEndMs(), f.jitCpuShare(), f.warmed());
    }
}
