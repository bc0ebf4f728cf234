package dev.sluice.bench;

import dev.sluice.app.demo.ResultCollector;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisNode;
import dev.sluice.testkit.RedisSentinels;
import dev.sluice.testkit.TelegramBehaviour;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Issue 7, scenario {@code chaos}: one bot, 3 sender processes (separate JVMs) sharing the Redis budget,
 * and four faults, one after the other, each on its own backlog (60 s of sends at the budget rate, 300
 * chats) with the fault injected 15 s into the drain:
 * <ul>
 *   <li>{@code kill-sender}: {@code kill -9} (SIGKILL by PID) of one sender; a replacement is started
 *       after the phase for the next ones;</li>
 *   <li>{@code redis-down}: redis-server stopped for 30 s, then started again (empty: no persistence);</li>
 *   <li>{@code provider-5xx}: every provider call answered 502 for 20 s ({@link FaultProxy});</li>
 *   <li>{@code bot-429-storm}: FakeTelegram answers the next 10 calls of the bot with a bot-wide 429
 *       (retry_after 2 s), each opening or extending the bot's penalty.</li>
 * </ul>
 * and, only when named in {@code --faults}, {@code redis-failover} and {@code sentinel-failover} (see
 * {@link #FAILOVER_FAULTS}).
 * Per fault: {@code lost} (notifications the provider never accepted), {@code order_violations} (per chat,
 * the demo's analyzer), {@code seconds_over_limit} (distinct seconds in which FakeTelegram refused a call
 * by its rate limits, the injected 429s excluded: FakeTelegram enforces Telegram's limits, so a send
 * above a limit shows as such a refusal), {@code duplicates} (texts accepted twice), {@code in_flight_at_kill}
 * (messages the killed sender had called the provider for without writing their result) and
 * {@code recovery_s} (see {@link ChaosPhase#recovery}); the per-fault run and report: {@link ChaosPhase}.
 */
public final class Chaos {
    static final String BOT = "chaos";
    static final int CHATS = 300;
    static final List<String> FAULTS = List.of("kill-sender", "redis-down", "provider-5xx", "bot-429-storm");
    /**
     * Faults run only when named in {@code --faults}, each with its own 3 senders on its own Redis deployment:
     * {@code redis-failover} (kill -9 of the primary owning the bot's slot in a 3-primary cluster with a replica each)
     * and {@code sentinel-failover} (kill -9 of the primary of a Sentinel set: 1 replica, 3 Sentinels).
     */
    static final List<String> FAILOVER_FAULTS = List.of("redis-failover", "sentinel-failover");

    private Chaos() {
    }

    /** Numbers of one fault. */
    record FaultResult(String fault, int messages, long lost, long orderViolations, long secondsOverLimit, long duplicates,
                       long inFlightAtKill, double recoverySeconds, long provider429, long injected, Map<String, Long> results,
                       double drainSeconds, boolean completed) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("lost", lost);
            m.put("order_violations", orderViolations);
            m.put("seconds_over_limit", secondsOverLimit);
            m.put("duplicates", duplicates);
            m.put("in_flight_at_kill", inFlightAtKill);
            m.put("recovery_s", Math.round(recoverySeconds * 10) / 10.0);
            return m;
        }
    }

    public static int run(String[] argv) throws Exception {
        BenchArgs args = BenchArgs.parse(argv);
        double scale = args.scale();
        double rate = args.dbl("budget-rate", 25);
        int phaseSeconds = args.scaled("phase-seconds", 60, 4);
        Duration faultAt = Duration.ofMillis((long) (15_000 * scale));
        Duration redisDown = Duration.ofMillis((long) (args.dbl("redis-down-s", 30 * scale) * 1000));
        Duration provider5xx = Duration.ofMillis((long) (args.dbl("provider-5xx-s", 20 * scale) * 1000));
        int stormCalls = args.integer("storm-calls", 10);
        int stormRetryAfterS = args.integer("storm-retry-after-s", 2);
        int senders = args.integer("senders", 3);
        int messages = (int) Math.round(phaseSeconds * rate);
        Set<String> faults = new java.util.LinkedHashSet<>(List.of(args.string("faults", String.join(",", FAULTS)).split(",")));
        List<String> known = new java.util.ArrayList<>(FAULTS);
        known.addAll(FAILOVER_FAULTS);
        if (!known.containsAll(faults)) {
            throw new IllegalArgumentException("--faults: expected some of " + known + ", was " + faults);
        }

        try (Infra infra = Infra.start(FakeTelegramLimits.telegram())) {
            FaultProxy proxy = infra.track(new FaultProxy(infra.telegram.url()));
            ResultCollector collector = infra.collector();
            Map<String, String> tokens = Workload.tokens(List.of(BOT));
            String providerBot = FakeTelegram.botIdOf(tokens.get(BOT));
            Map<String, String> settings = infra.senderSettings(proxy.apiUrl());
            settings.put("budget.global.rate.per.s", Double.toString(rate));
            settings.put("budget.chat.burst", "2");
            settings.put("budget.max.replicas", Integer.toString(senders)); // the local fallback's share: rate / replicas
            // a killed member's partitions move after the session timeout (45 s by default)
            settings.put("kafka.session.timeout.ms", args.string("session-timeout-ms", "10000"));
            settings.put("kafka.heartbeat.interval.ms", "3000");
            List<FaultResult> results = new java.util.ArrayList<>();
            ChaosPhase p = new ChaosPhase(infra, collector, providerBot, messages, rate);
            if (faults.stream().anyMatch(FAULTS::contains)) {
            try (Senders group = Senders.start("chaos", senders, settings, tokens, infra.workDir, "256m")) {
                if (faults.contains("kill-sender")) {
                results.add(p.run("kill-sender", 1, () -> {
                    SenderProcess victim = group.processes().get(0);
                    Infra.say("kill -9 %s (pid %d)", victim.instanceId(), victim.pid());
                    long at = System.currentTimeMillis();
                    group.kill9(victim); // returns once the process is gone (it reads its CPU time first)
                    // the end is its death: a call it made between the decision and the signal is its in flight
                    long gone = System.currentTimeMillis();
                    Infra.say("%s gone at %s (kill decided at %s)", victim.instanceId(),
                            java.time.Instant.ofEpochMilli(gone), java.time.Instant.ofEpochMilli(at));
                    return new Fault(at, gone, victim.instanceId(), 0, 0);
                }, faultAt));
                group.add("chaos-4"); // the replacement, so the next faults start with 3 senders again
                }
                if (faults.contains("redis-down")) {
                results.add(p.run("redis-down", 2, () -> {
                    long at = System.currentTimeMillis();
                    Infra.say("redis-server stopped for %d ms", redisDown.toMillis());
                    infra.redis.stop();
                    Thread.sleep(redisDown.toMillis()); // the outage's length is the scenario
                    infra.redis.restart();
                    Infra.say("redis-server started again");
                    return new Fault(at, System.currentTimeMillis(), null, 0, 0);
                }, faultAt));
                }
                if (faults.contains("provider-5xx")) {
                results.add(p.run("provider-5xx", 3, () -> {
                    long at = System.currentTimeMillis();
                    Infra.say("provider answers 502 for %d ms", provider5xx.toMillis());
                    proxy.failFor(provider5xx);
                    return new Fault(at, at + provider5xx.toMillis(), null, 0, 0);
                }, faultAt));
                }
                if (faults.contains("bot-429-storm")) {
                results.add(p.run("bot-429-storm", 4, () -> {
                    long at = System.currentTimeMillis();
                    int callIndex = infra.telegram.calls().size();
                    Infra.say("bot-wide 429 storm: next %d calls answered 429 retry_after %d s", stormCalls, stormRetryAfterS);
                    infra.telegram.enqueueForBot(providerBot, new TelegramBehaviour.TooManyRequests(Duration.ofSeconds(stormRetryAfterS)), stormCalls);
                    return new Fault(at, -1, null, callIndex, stormCalls);
                }, faultAt));
                }
            }
            }
            if (faults.contains("redis-failover")) {
                results.add(failover(infra, p, "redis-failover", 5, senders, settings, tokens, faultAt));
            }
            if (faults.contains("sentinel-failover")) {
                results.add(failover(infra, p, "sentinel-failover", 6, senders, settings, tokens, faultAt));
            }

            BenchResult out = new BenchResult("chaos", "fault", "messages", "lost", "order violations", "seconds over limit",
                    "duplicates", "in flight at kill", "recovery s", "provider 429 (injected)", "results", "drain s", "completed");
            for (FaultResult r : results) {
                out.row(r.fault(), r.messages(), r.lost(), r.orderViolations(), r.secondsOverLimit(), r.duplicates(), r.inFlightAtKill(),
                        r.recoverySeconds(), r.provider429() + " (" + r.injected() + ")", r.results(), r.drainSeconds(), r.completed());
                out.put(r.fault(), r.json());
            }
            out.note("%d sender JVMs, budget %.1f msg/s burst 1, chat 1/s burst 2, budget.max.replicas=%d, kafka.session.timeout.ms=%s; %d messages per fault over %d chats; fault at +%d ms",
                    senders, rate, senders, settings.get("kafka.session.timeout.ms"), messages, CHATS, faultAt.toMillis());
            out.note("recovery_s: kill-sender: from the kill until the first chat the killed sender had served is served again;"
                    + " others: from the end of the fault until 2 s with >= 80%% of the budget rate accepted (or, if the backlog ended first, until the first acceptance)");
            out.emit(args);
            return results.stream().allMatch(FaultResult::completed) ? 0 : 2;
        }
    }

    /**
     * A Redis failover under its own senders: a local Redis Cluster (3 primaries, 1 replica each) or a Sentinel set;
     * the fault is kill -9 of the primary serving the bot, and it ends when a replica serves it.
     */
    private static FaultResult failover(Infra infra, ChaosPhase p, String fault, int index, int senders, Map<String, String> base,
                                        Map<String, String> tokens, Duration faultAt) throws Exception {
        Map<String, String> settings = new java.util.HashMap<>(base);
        String key = dev.sluice.sender.budget.BudgetKeys.botState(BOT);
        Injector kill;
        if (fault.equals("redis-failover")) {
            RedisCluster cluster = infra.track(RedisCluster.start(3, 1));
            settings.put("redis.url", "redis-cluster://" + cluster.seeds());
            kill = () -> {
                RedisNode owner = cluster.primaryOf(key).orElseThrow();
                long at = System.currentTimeMillis();
                cluster.kill9(owner);
                RedisNode promoted = cluster.awaitPrimaryOf(key, owner, Duration.ofSeconds(60));
                Infra.say("kill -9 of cluster primary %s; %s serves the bot after %d ms", owner, promoted,
                        System.currentTimeMillis() - at);
                return new Fault(at, System.currentTimeMillis(), null, 0, 0);
            };
        } else {
            RedisSentinels set = infra.track(RedisSentinels.start(1, 3));
            settings.put("redis.url", set.url());
            kill = () -> {
                RedisNode primary = set.primary().orElseThrow();
                long at = System.currentTimeMillis();
                primary.kill9();
                RedisNode promoted = set.awaitFailover(primary, Duration.ofSeconds(60));
                Infra.say("kill -9 of Sentinel primary %s; %s promoted after %d ms", primary, promoted,
                        System.currentTimeMillis() - at);
                return new Fault(at, System.currentTimeMillis(), null, 0, 0);
            };
        }
        try (Senders group = Senders.start("chaos-" + fault, senders, settings, tokens, infra.workDir, "256m")) {
            return p.run(fault, index, kill, faultAt);
        }
    }

    /** When a fault began and ended (epoch ms; end -1: derived from the injected calls), what it hit. */
    record Fault(long startMs, long endMs, String killedInstance, int callIndex, int injectedCalls) {
    }

    @FunctionalInterface
    interface Injector {
        Fault inject() throws Exception;
    }
}
