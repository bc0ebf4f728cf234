package dev.sluice.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * The shared budget script against Bucket4j's Lettuce backend ({@code LettuceBasedProxyManager}, CAS) on the
 * same redis-server: one hot key (one bot, one chat), a bucket with the same rate and burst, 1 and 16
 * concurrent clients sharing one Lettuce connection per implementation. Every client asks in a loop without
 * waiting, so almost every decision is a refusal: this measures decisions per second and their latency,
 * and counts grants to check over-admission ({@code granted − (burst + rate·T)} if positive, T from the
 * first to the last decision).
 *
 * <p>Measured on both sides in the same run: CPU per decision of redis-server ({@code INFO cpu}) and of this JVM
 * (process CPU; of it, Lettuce's event-loop threads), so it shows which side saturates. Both sides use one
 * shared Lettuce connection with the same client options. Additionally, and reported apart from the
 * single-decision comparison: Sluice's batched decision ({@code tryAcquireAll}, {@value #BATCH} candidate chats
 * per call), {@code sluice_batch16_decisions_per_s}.
 *
 * <p>Then {@code round_trips_per_delivered}: a simulated drain of a backlog over many chats through
 * {@code tryAcquireAll} (K ready chats per EVALSHA, refused chats rescheduled at the returned wait), with
 * the EVALSHA calls counted per granted message; the same drain with one {@code tryAcquire} per candidate
 * is the baseline.
 *
 * <p>Parts: {@link DecisionLoad} (the closed-loop clients and what they measured), {@link Bucket4jSide},
 * {@link CommandStats} (redis-server's command counts and CPU), {@link BudgetDrain}, and {@link SenderRoundTrips}.
 * Single-threaded apart from {@link DecisionLoad#measure}'s client threads.
 */
final class BudgetVsBucket4j {
    /** Candidates per call in the batched measurement. */
    static final int BATCH = 16;

    private BudgetVsBucket4j() {
    }

    static int run(String[] args) throws Exception {
        String json = null;
        int seconds = 10;
        int[] clientCounts = {1, 16};
        double rate = 1000;
        int burst = 100;
        int senders = 3;
        int chats = 200;
        int perChat = 3;
        double senderRate = 25;
        long reservationMs = 500;
        boolean decisionsOnly = false; // skip the sender runs and drains (round_trips_per_delivered), for quick iterations
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = args[++i];
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--clients" -> clientCounts = java.util.Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--rate" -> rate = Double.parseDouble(args[++i]);
                case "--burst" -> burst = Integer.parseInt(args[++i]);
                case "--senders" -> senders = Integer.parseInt(args[++i]);
                case "--sender-chats" -> chats = Integer.parseInt(args[++i]);
                case "--sender-messages-per-chat" -> perChat = Integer.parseInt(args[++i]);
                case "--sender-rate" -> senderRate = Double.parseDouble(args[++i]);
                case "--sender-reservation-ms" -> reservationMs = Long.parseLong(args[++i]);
                case "--decisions-only" -> decisionsOnly = true;
                default -> {
                    System.err.println("unknown option " + args[i]);
                    return 2;
                }
            }
        }
        try (RedisInstance redis = RedisLauncher.start()) {
            System.out.printf(Locale.ROOT, "redis %s; rate %.0f/s, burst %d, %d s per measurement (+2 s warm-up)%n",
                    redis.source(), rate, burst, seconds);
            ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            ObjectNode root = mapper.createObjectNode();
            root.put("scenario", "budget-vs-bucket4j");
            root.put("redis", redis.source().toString());
            root.put("rate_per_s", rate);
            root.put("burst", burst);
            root.put("seconds", seconds);
            root.put("batch16_description", "sluice_batch16_*: additionally, Sluice's batched decision (the sender's real path):"
                    + " tryAcquireAll for one bot and " + BATCH + " candidate chats per EVALSHA on the same hot bot key and limits;"
                    + " decisions = candidates decided (granted or refused); over-admission checked as for single decisions;"
                    + " not comparable one-to-one with bucket4j_ops_per_s (one decision per call)");
            root.put("available_processors", Runtime.getRuntime().availableProcessors());
            ArrayNode results = root.putArray("results");
            List<String[]> rows = new ArrayList<>();
            List<String> cpuRows = new ArrayList<>();
            List<String> batchRows = new ArrayList<>();

            BudgetLimits limits = new BudgetLimits(rate, burst, 1_000_000, 1_000_000);
            try (RedisGcraBudget sluice = new RedisGcraBudget(redis.url(), BudgetConfig.of(limits), Duration.ofSeconds(5));
                 Bucket4jSide bucket4j = new Bucket4jSide(redis.url(), rate, burst);
                 CommandStats stats = new CommandStats(redis.url())) {
                for (int clients : clientCounts) {
                    // warm up both on throw-away keys, then measure each on a fresh (full) key
                    DecisionLoad.measure(clients, Duration.ofSeconds(2), sluiceDecider(sluice, "warm" + clients));
                    DecisionLoad.measure(clients, Duration.ofSeconds(2), bucket4j.decider("warm" + clients));
                    long c0 = stats.commands();
                    DecisionLoad.Cpu u0 = stats.cpu();
                    DecisionLoad.Measured s = DecisionLoad.measure(clients, Duration.ofSeconds(seconds), sluiceDecider(sluice, "hot" + clients));
                    DecisionLoad.Cpu u1 = stats.cpu();
                    long c1 = stats.commands();
                    DecisionLoad.Cpu u2 = stats.cpu();
                    DecisionLoad.Measured b = DecisionLoad.measure(clients, Duration.ofSeconds(seconds), bucket4j.decider("hot" + clients));
                    DecisionLoad.Cpu u3 = stats.cpu();
                    long c2 = stats.commands();
                    s = s.withCpu(u1.minus(u0));
                    b = b.withCpu(u3.minus(u2));
                    // additionally (not part of the single-decision ratio): the batched decision, K candidates per call
                    DecisionLoad.measure(clients, Duration.ofSeconds(2), BATCH, sluiceBatchDecider(sluice, "warm" + clients, BATCH));
                    DecisionLoad.Cpu u4 = stats.cpu();
                    DecisionLoad.Measured k = DecisionLoad.measure(clients, Duration.ofSeconds(seconds), BATCH, sluiceBatchDecider(sluice, "hot" + clients, BATCH));
                    k = k.withCpu(stats.cpu().minus(u4));
                    double sluiceCalls = (c1 - c0) / (double) s.decisions();
                    double b4jCalls = (c2 - c1) / (double) b.decisions();
                    ObjectNode r = results.addObject();
                    r.put("clients", clients);
                    r.put("sluice_ops_per_s", Math.round(s.opsPerS()));
                    r.put("bucket4j_ops_per_s", Math.round(b.opsPerS()));
                    r.put("sluice_p99_us", s.p99Micros());
                    r.put("bucket4j_p99_us", b.p99Micros());
                    r.put("sluice_p50_us", s.latencyMicros().getValueAtPercentile(50));
                    r.put("bucket4j_p50_us", b.latencyMicros().getValueAtPercentile(50));
                    r.put("over_admitted", s.overAdmitted(rate, burst));
                    r.put("bucket4j_over_admitted", b.overAdmitted(rate, burst));
                    r.put("sluice_granted", s.granted());
                    r.put("bucket4j_granted", b.granted());
                    r.put("allowed_by_limit", (long) Math.floor(burst + rate * s.seconds()));
                    r.put("speedup", Math.round(100 * s.opsPerS() / b.opsPerS()) / 100.0);
                    r.put("sluice_redis_commands_per_decision", round3(sluiceCalls));
                    r.put("bucket4j_redis_commands_per_decision", round3(b4jCalls));
                    r.put("sluice_batch16_decisions_per_s", Math.round(k.opsPerS()));
                    r.put("sluice_batch16_calls_per_s", Math.round(k.opsPerS() / BATCH));
                    r.put("sluice_batch16_p99_us_per_call", k.p99Micros());
                    r.put("sluice_batch16_over_admitted", k.overAdmitted(rate, burst));
                    r.put("sluice_batch16_granted", k.granted());
                    r.put("sluice_batch16_redis_cpu_us_per_decision", round3(k.redisCpuMicrosPerDecision()));
                    r.put("sluice_batch16_client_cpu_us_per_decision", round3(k.clientCpuMicrosPerDecision()));
                    batchRows.add(String.format(Locale.ROOT, "%-8d %16s %12s %9d µs %11d %12.2f %12.2f", clients,
                            String.format(Locale.ROOT, "%,.0f", k.opsPerS()), String.format(Locale.ROOT, "%,.0f", k.opsPerS() / BATCH),
                            k.p99Micros(), k.overAdmitted(rate, burst), k.redisCpuMicrosPerDecision(), k.clientCpuMicrosPerDecision()));
                    r.put("sluice_redis_cpu_us_per_decision", round3(s.redisCpuMicrosPerDecision()));
                    r.put("bucket4j_redis_cpu_us_per_decision", round3(b.redisCpuMicrosPerDecision()));
                    r.put("sluice_client_cpu_us_per_decision", round3(s.clientCpuMicrosPerDecision()));
                    r.put("bucket4j_client_cpu_us_per_decision", round3(b.clientCpuMicrosPerDecision()));
                    r.put("sluice_redis_cores", round3(s.redisCores()));
                    r.put("bucket4j_redis_cores", round3(b.redisCores()));
                    r.put("sluice_client_cores", round3(s.clientCores()));
                    r.put("bucket4j_client_cores", round3(b.clientCores()));
                    r.put("sluice_redis_exec_us_per_decision", round3(s.redisExecMicrosPerDecision()));
                    r.put("bucket4j_redis_exec_us_per_decision", round3(b.redisExecMicrosPerDecision()));
                    r.put("sluice_client_event_loop_cpu_us_per_decision", round3(s.eventLoopCpuMicrosPerDecision()));
                    r.put("bucket4j_client_event_loop_cpu_us_per_decision", round3(b.eventLoopCpuMicrosPerDecision()));
                    cpuRows.add(String.format(Locale.ROOT, "%-8d %6.1f (%4.1f) %6.1f (%4.1f) %6.1f (%4.1f) %6.1f (%4.1f) %9.2f %9.2f %9.2f %9.2f",
                            clients,
                            s.redisCpuMicrosPerDecision(), s.redisExecMicrosPerDecision(),
                            b.redisCpuMicrosPerDecision(), b.redisExecMicrosPerDecision(),
                            s.clientCpuMicrosPerDecision(), s.eventLoopCpuMicrosPerDecision(),
                            b.clientCpuMicrosPerDecision(), b.eventLoopCpuMicrosPerDecision(),
                            s.redisCores(), b.redisCores(), s.clientCores(), b.clientCores()));
                    rows.add(new String[] {Integer.toString(clients),
                            String.format(Locale.ROOT, "%,.0f", s.opsPerS()), String.format(Locale.ROOT, "%,.0f", b.opsPerS()),
                            String.format(Locale.ROOT, "%.2f×", s.opsPerS() / b.opsPerS()),
                            Long.toString(s.p99Micros()), Long.toString(b.p99Micros()),
                            Long.toString(s.overAdmitted(rate, burst)), Long.toString(b.overAdmitted(rate, burst)),
                            String.format(Locale.ROOT, "%.2f", sluiceCalls), String.format(Locale.ROOT, "%.2f", b4jCalls)});
                }
            }

            if (decisionsOnly) {
                printDecisions(rows, cpuRows, batchRows);
                if (json != null) {
                    mapper.writeValue(new File(json), root);
                    System.out.println("wrote " + json);
                }
                return 0;
            }
            System.out.printf(Locale.ROOT, "%nsender runs: %d SenderService instances, %d chats x %d messages of one bot, budget %.0f/s,"
                    + " reservations %d ms and off ...%n", senders, chats, perChat, senderRate, reservationMs);
            SenderRoundTrips.Result run = SenderRoundTrips.run(redis, senders, chats, perChat, senderRate, reservationMs);
            SenderRoundTrips.Result plain = SenderRoundTrips.run(redis, senders, chats, perChat, senderRate, 0);
            root.put("round_trips_per_delivered", round3(run.decisionTripsPerDelivered()));
            root.put("round_trips_per_delivered_without_reservations", round3(plain.decisionTripsPerDelivered()));
            root.put("redis_round_trips_per_delivered_all", round3(run.allTripsPerDelivered()));
            ArrayNode runs = root.putArray("sender_runs");
            for (SenderRoundTrips.Result r : List.of(run, plain)) {
                ObjectNode sr = runs.addObject();
                sr.put("description", SENDER_RUN_DESCRIPTION);
                sr.put("budget_reservation_max_ms", r.reservationMs());
                sr.put("senders", r.senders());
                sr.put("messages", r.chats() * r.perChat());
                sr.put("delivered", r.delivered());
                sr.put("budget_rate_per_s", senderRate);
                sr.put("seconds", round3(r.seconds()));
                sr.put("round_trips_per_delivered", round3(r.decisionTripsPerDelivered()));
                sr.put("redis_round_trips_per_delivered_all", round3(r.allTripsPerDelivered()));
                sr.put("budget_round_trips", r.budgetTrips());
                sr.put("server_evalsha_calls", r.serverEvalsha());
                sr.put("sent_mark_reads", r.markReads());
                sr.put("sent_mark_writes", r.markWrites());
                sr.put("provider_max_per_1s_window", r.maxProviderPerSecond());
                sr.put("provider_429", r.provider429());
                ObjectNode refusals = sr.putObject("budget_refusals_by_limit");
                r.refusalsByLimit().forEach(refusals::put);
            }

            BudgetDrain.Drain batch = BudgetDrain.drain(redis.url(), 16, 1);
            BudgetDrain.Drain single = BudgetDrain.drain(redis.url(), 1, 1);
            BudgetDrain.Drain batchBurst = BudgetDrain.drain(redis.url(), 16, 10);
            BudgetDrain.Drain singleBurst = BudgetDrain.drain(redis.url(), 1, 10);
            root.put("drain_round_trips_per_delivered", round3(batch.perDelivered()));
            root.put("drain_round_trips_per_delivered_single_baseline", round3(single.perDelivered()));
            root.put("drain_round_trips_per_delivered_burst10", round3(batchBurst.perDelivered()));
            root.put("drain_round_trips_per_delivered_burst10_single_baseline", round3(singleBurst.perDelivered()));
            root.put("drain_over_admitted", Math.max(Math.max(batch.overAdmitted(), single.overAdmitted()),
                    Math.max(batchBurst.overAdmitted(), singleBurst.overAdmitted())));
            root.put("drain_messages", batch.delivered());
            root.put("drain_description", BudgetDrain.DRAIN_DESCRIPTION);

            printDecisions(rows, cpuRows, batchRows);
            System.out.println();
            System.out.println(SENDER_RUN_DESCRIPTION);
            for (SenderRoundTrips.Result r : List.of(run, plain)) {
                System.out.printf(Locale.ROOT, "sender run, budget.reservation.max.ms=%d: %d delivered in %.1f s; round trips per delivered"
                                + " before the provider call %.3f (budget EVALSHA %d, server saw %d; sent-mark GETs %d); all Redis round"
                                + " trips per delivered %.3f (sent-mark SETs %d); provider max %d in 1 s, 429s %d; refusals %s%n",
                        r.reservationMs(), r.delivered(), r.seconds(), r.decisionTripsPerDelivered(), r.budgetTrips(),
                        r.serverEvalsha(), r.markReads(), r.allTripsPerDelivered(), r.markWrites(), r.maxProviderPerSecond(),
                        r.provider429(), r.refusalsByLimit());
            }
            System.out.println();
            System.out.println(BudgetDrain.DRAIN_DESCRIPTION);
            System.out.printf(Locale.ROOT, "round trips per delivered, global burst 1:  batch %.3f   single-message baseline %.3f%n",
                    batch.perDelivered(), single.perDelivered());
            System.out.printf(Locale.ROOT, "round trips per delivered, global burst 10: batch %.3f   single-message baseline %.3f%n",
                    batchBurst.perDelivered(), singleBurst.perDelivered());
            if (json != null) {
                mapper.writeValue(new File(json), root);
                System.out.println("wrote " + json);
            }
        }
        return 0;
    }

    private static void printDecisions(List<String[]> rows, List<String> cpuRows, List<String> batchRows) {
        System.out.println();
        System.out.printf("%-8s %14s %14s %8s %11s %11s %11s %9s %12s %12s%n", "clients", "sluice ops/s", "bucket4j ops/s",
                "ratio", "sluice p99", "b4j p99", "sluice over", "b4j over", "sluice cmds", "b4j cmds");
        for (String[] row : rows) {
            System.out.printf("%-8s %14s %14s %8s %8s µs %8s µs %11s %9s %12s %12s%n", (Object[]) row);
        }
        System.out.println("(cmds = commands redis-server executed per decision, from INFO commandstats, calls made inside scripts included)");
        System.out.println();
        System.out.printf("%-8s %13s %13s %13s %13s %9s %9s %9s %9s%n", "clients", "sluice redis", "b4j redis",
                "sluice client", "b4j client", "s redis", "b redis", "s client", "b client");
        System.out.printf("%-8s %13s %13s %13s %13s%n", "", "(exec)", "(exec)", "(event loop)", "(event loop)");
        for (String row : cpuRows) {
            System.out.println(row);
        }
        System.out.println("(CPU µs per decision: redis-server from INFO cpu used_cpu_user+used_cpu_sys, client = this JVM's"
                + " process CPU;"
                + " (exec) = redis command execution time from INFO commandstats, (event loop) = Lettuce's I/O threads; then cores used over the measurement: 1.0 redis = its main thread saturated; the machine has "
                + Runtime.getRuntime().availableProcessors() + ")");
        System.out.println();
        System.out.println("Sluice batched (the sender's path, NOT the single-decision comparison above): tryAcquireAll, one bot, "
                + BATCH + " candidate chats per EVALSHA; decisions = candidates decided (granted or refused)");
        System.out.printf("%-8s %16s %12s %12s %11s %12s %12s%n", "clients", "decisions/s", "calls/s", "p99/call",
                "over", "redis µs/dec", "client µs/dec");
        for (String row : batchRows) {
            System.out.println(row);
        }
    }

    private static double round3(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    private static BooleanSupplier sluiceDecider(RedisGcraBudget budget, String suffix) {
        String bot = "bench-" + suffix + "-" + UUID.randomUUID().toString().substring(0, 6);
        BudgetRequest request = BudgetRequest.live(bot, "1");
        return () -> budget.tryAcquire(request).granted();
    }

    /**
     * Sluice's real sender path: one {@code tryAcquireAll} for one bot and {@code k} candidate chats (distinct chats
     * of the same hot bot key) per EVALSHA; returns how many of the k were granted.
     */
    private static java.util.function.IntSupplier sluiceBatchDecider(RedisGcraBudget budget, String suffix, int k) {
        String bot = "bench-batch-" + suffix + "-" + UUID.randomUUID().toString().substring(0, 6);
        List<BudgetRequest> requests = new ArrayList<>(k);
        for (int i = 0; i < k; i++) {
            requests.add(BudgetRequest.live(bot, Integer.toString(1 + i)));
        }
        List<BudgetRequest> batch = List.copyOf(requests);
        return () -> {
            int granted = 0;
            for (Decision d : budget.tryAcquireAll(bot, batch)) {
                if (d.granted()) {
                    granted++;
                }
            }
            return granted;
        };
    }

    static final String SENDER_RUN_DESCRIPTION = "sender run (round_trips_per_delivered): real SenderService instances"
            + " (production wiring: ResilientBudget + RedisSentMarks) on an embedded Kafka broker drain a backlog of one bot"
            + " to FakeTelegram (Telegram's limits); counted by the senders' sluice.redis.round.trips counters, EVALSHA"
            + " cross-checked with redis-server's INFO commandstats. Before the provider call: budget script calls (the"
            + " sent-mark check rides in them) + separate sent-mark reads; all: + the sent-mark writes after the call";
}
