package dev.sluice.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.HdrHistogram.Histogram;

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
 */
final class BudgetVsBucket4j {
    /** Candidates per call in the batched measurement. */
    static final int BATCH = 16;

    private BudgetVsBucket4j() {
    }

    record Measured(long decisions, long granted, double seconds, Histogram latencyMicros, Cpu cpu) {
        Measured(long decisions, long granted, double seconds, Histogram latencyMicros) {
            this(decisions, granted, seconds, latencyMicros, Cpu.NONE);
        }

        Measured withCpu(Cpu used) {
            return new Measured(decisions, granted, seconds, latencyMicros, used);
        }

        /** redis-server CPU (user + sys, all its threads) per decision, µs. */
        double redisCpuMicrosPerDecision() {
            return cpu.redisMicros() / (double) decisions;
        }

        /** This JVM's CPU (all threads: client threads, Lettuce's event loop, the harness) per decision, µs. */
        double clientCpuMicrosPerDecision() {
            return cpu.jvmMicros() / (double) decisions;
        }

        /** Of the client CPU: Lettuce's event-loop threads per decision, µs. */
        double eventLoopCpuMicrosPerDecision() {
            return cpu.eventLoopMicros() / (double) decisions;
        }

        /** Of redis-server's CPU: command execution (INFO commandstats usec, script bodies included) per decision, µs. */
        double redisExecMicrosPerDecision() {
            return cpu.redisExecMicros() / (double) decisions;
        }

        /** Share of one core redis-server used over the measurement (1.0 = its one main thread saturated). */
        double redisCores() {
            return cpu.redisMicros() / (seconds * 1e6);
        }

        /** Cores this JVM used over the measurement. */
        double clientCores() {
            return cpu.jvmMicros() / (seconds * 1e6);
        }

        double opsPerS() {
            return decisions / seconds;
        }

        long p99Micros() {
            return latencyMicros.getValueAtPercentile(99);
        }

        long overAdmitted(double rate, int burst) {
            return Math.max(0, granted - (long) Math.floor(burst + rate * seconds));
        }
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
                    measure(clients, Duration.ofSeconds(2), sluiceDecider(sluice, "warm" + clients));
                    measure(clients, Duration.ofSeconds(2), bucket4j.decider("warm" + clients));
                    long c0 = stats.commands();
                    Cpu u0 = stats.cpu();
                    Measured s = measure(clients, Duration.ofSeconds(seconds), sluiceDecider(sluice, "hot" + clients));
                    Cpu u1 = stats.cpu();
                    long c1 = stats.commands();
                    Cpu u2 = stats.cpu();
                    Measured b = measure(clients, Duration.ofSeconds(seconds), bucket4j.decider("hot" + clients));
                    Cpu u3 = stats.cpu();
                    long c2 = stats.commands();
                    s = s.withCpu(u1.minus(u0));
                    b = b.withCpu(u3.minus(u2));
                    // additionally (not part of the single-decision ratio): the batched decision, K candidates per call
                    measure(clients, Duration.ofSeconds(2), BATCH, sluiceBatchDecider(sluice, "warm" + clients, BATCH));
                    Cpu u4 = stats.cpu();
                    Measured k = measure(clients, Duration.ofSeconds(seconds), BATCH, sluiceBatchDecider(sluice, "hot" + clients, BATCH));
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

            Drain batch = drain(redis.url(), 16, 1);
            Drain single = drain(redis.url(), 1, 1);
            Drain batchBurst = drain(redis.url(), 16, 10);
            Drain singleBurst = drain(redis.url(), 1, 10);
            root.put("drain_round_trips_per_delivered", round3(batch.perDelivered()));
            root.put("drain_round_trips_per_delivered_single_baseline", round3(single.perDelivered()));
            root.put("drain_round_trips_per_delivered_burst10", round3(batchBurst.perDelivered()));
            root.put("drain_round_trips_per_delivered_burst10_single_baseline", round3(singleBurst.perDelivered()));
            root.put("drain_over_admitted", Math.max(Math.max(batch.overAdmitted, single.overAdmitted),
                    Math.max(batchBurst.overAdmitted, singleBurst.overAdmitted)));
            root.put("drain_messages", batch.delivered);
            root.put("drain_description", DRAIN_DESCRIPTION);

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
            System.out.println(DRAIN_DESCRIPTION);
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

    /** {@code clients} threads call {@code decide} in a loop for {@code duration}; latency per call in µs. */
    static Measured measure(int clients, Duration duration, BooleanSupplier decide) throws InterruptedException {
        return measure(clients, duration, 1, () -> decide.getAsBoolean() ? 1 : 0);
    }

    /**
     * {@code clients} threads call {@code grantsOfOneCall} (one call deciding {@code decisionsPerCall} candidates,
     * returning how many were granted) in a loop for {@code duration}; latency per call in µs.
     */
    static Measured measure(int clients, Duration duration, int decisionsPerCall, java.util.function.IntSupplier grantsOfOneCall)
            throws InterruptedException {
        AtomicLong decisions = new AtomicLong();
        AtomicLong granted = new AtomicLong();
        AtomicLong firstNanos = new AtomicLong(Long.MAX_VALUE);
        AtomicLong lastNanos = new AtomicLong(Long.MIN_VALUE);
        Histogram total = new Histogram(60_000_000L, 3);
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(clients);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            Thread t = new Thread(() -> {
                Histogram h = new Histogram(60_000_000L, 3);
                long n = 0;
                long g = 0;
                try {
                    start.await();
                    long begin = System.nanoTime();
                    firstNanos.accumulateAndGet(begin, Math::min);
                    long end = begin + duration.toNanos();
                    long now = begin;
                    while (now < end) {
                        int ok = grantsOfOneCall.getAsInt();
                        long after = System.nanoTime();
                        h.recordValue(Math.max(1, (after - now) / 1000));
                        n += decisionsPerCall;
                        g += ok;
                        now = after;
                    }
                    lastNanos.accumulateAndGet(now, Math::max);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    decisions.addAndGet(n);
                    granted.addAndGet(g);
                    synchronized (total) {
                        total.add(h);
                    }
                    done.countDown();
                }
            }, "bench-client-" + c);
            threads.add(t);
            t.start();
        }
        start.countDown();
        done.await();
        double seconds = (lastNanos.get() - firstNanos.get()) / 1e9;
        return new Measured(decisions.get(), granted.get(), seconds, total);
    }

    /** Bucket4j's Lettuce CAS backend on one connection (byte[] values), a bucket of the same rate and burst. */
    static final class Bucket4jSide implements AutoCloseable {
        private final RedisClient client;
        private final StatefulRedisConnection<String, byte[]> connection;
        private final LettuceBasedProxyManager<String> proxyManager;
        private final BucketConfiguration configuration;

        Bucket4jSide(String url, double rate, int burst) {
            this.client = RedisClient.create(url);
            // the same client options as Sluice's budget connection (RedisGcraBudget): commands rejected while
            // disconnected, no per-command timer task (a synchronous caller bounds its own wait)
            client.setOptions(ClientOptions.builder()
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
                    .build());
            this.connection = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
            this.proxyManager = Bucket4jLettuce.casBasedBuilder(connection)
                    .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                    .build();
            // refill rate tokens per second, greedily (continuously), capacity = burst: the same limit as GCRA(rate, burst)
            long perSecond = Math.round(rate);
            this.configuration = BucketConfiguration.builder()
                    .addLimit(l -> l.capacity(burst).refillGreedy(perSecond, Duration.ofSeconds(1)))
                    .build();
        }

        BooleanSupplier decider(String suffix) {
            BucketProxy bucket = proxyManager.builder().build("bench-b4j-" + suffix + "-" + UUID.randomUUID(), () -> configuration);
            return () -> bucket.tryConsume(1);
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown();
        }
    }

    static final String SENDER_RUN_DESCRIPTION = "sender run (round_trips_per_delivered): real SenderService instances"
            + " (production wiring: ResilientBudget + RedisSentMarks) on an embedded Kafka broker drain a backlog of one bot"
            + " to FakeTelegram (Telegram's limits); counted by the senders' sluice.redis.round.trips counters, EVALSHA"
            + " cross-checked with redis-server's INFO commandstats. Before the provider call: budget script calls (the"
            + " sent-mark check rides in them) + separate sent-mark reads; all: + the sent-mark writes after the call";

    static final String DRAIN_DESCRIPTION = "drain: 200 chats x 3 messages of one bot, global 300/s, chat 10/s burst 3"
            + " (Telegram's shape at 10x speed), one driver thread that waits out bot-wide refusals (like the sender's pacer);"
            + " batch = up to 16 ready chats per EVALSHA, baseline = one EVALSHA per candidate";

    /** CPU time in µs of redis-server and of this JVM. */
    record Cpu(long redisMicros, long jvmMicros, long eventLoopMicros, long redisExecMicros) {
        static final Cpu NONE = new Cpu(0, 0, 0, 0);

        Cpu minus(Cpu earlier) {
            return new Cpu(redisMicros - earlier.redisMicros, jvmMicros - earlier.jvmMicros,
                    eventLoopMicros - earlier.eventLoopMicros, redisExecMicros - earlier.redisExecMicros);
        }
    }

    record Drain(long roundTrips, long delivered, long overAdmitted) {
        double perDelivered() {
            return roundTrips / (double) delivered;
        }
    }

    /**
     * Drains a backlog like the sender's ready queue: chats ordered by ready time; up to {@code batch} ready
     * chats are asked for in one call; a granted chat's next message is ready at once, a refused chat is
     * rescheduled at the returned wait. No provider calls: only the budget's round trips are counted.
     */
    static Drain drain(String url, int batch, int globalBurst) {
        int chats = 200;
        int perChat = 3;
        double rate = 300;
        BudgetLimits limits = new BudgetLimits(rate, globalBurst, 10, 3);
        String bot = "drain-" + UUID.randomUUID().toString().substring(0, 8);
        record Ready(long atNanos, String chat, int left) {
        }
        try (RedisGcraBudget budget = new RedisGcraBudget(url, BudgetConfig.of(limits), Duration.ofSeconds(5))) {
            PriorityQueue<Ready> queue = new PriorityQueue<>((a, b) -> Long.compare(a.atNanos, b.atNanos));
            long t0 = System.nanoTime();
            for (int c = 0; c < chats; c++) {
                queue.add(new Ready(t0, Integer.toString(100_000 + c), perChat));
            }
            long before = budget.redisRoundTrips();
            long delivered = 0;
            long firstCall = -1;
            long lastGrant = 0;
            // like the sender's pacer: after a refusal by a bot-wide limit the whole bot waits, not each chat
            long botNotBefore = 0;
            while (!queue.isEmpty()) {
                long wait = Math.max(queue.peek().atNanos, botNotBefore) - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                long now = System.nanoTime();
                if (firstCall < 0) {
                    firstCall = now;
                }
                List<Ready> picked = new ArrayList<>();
                while (picked.size() < batch && !queue.isEmpty() && queue.peek().atNanos <= now) {
                    picked.add(queue.poll());
                }
                List<BudgetRequest> requests = new ArrayList<>(picked.size());
                for (Ready r : picked) {
                    requests.add(BudgetRequest.live(bot, r.chat));
                }
                List<Decision> decisions = batch == 1 ? List.of(budget.tryAcquire(requests.get(0)))
                        : budget.tryAcquireAll(bot, requests);
                long after = System.nanoTime();
                for (int i = 0; i < picked.size(); i++) {
                    Ready r = picked.get(i);
                    Decision d = decisions.get(i);
                    if (d.granted()) {
                        delivered++;
                        lastGrant = after;
                        if (r.left > 1) {
                            queue.add(new Ready(after, r.chat, r.left - 1));
                        }
                    } else {
                        long at = after + d.retryIn().toNanos();
                        if (d.limit() == Limit.GLOBAL || d.limit() == Limit.GATE_BOT || d.limit() == Limit.HEADROOM) {
                            botNotBefore = Math.max(botNotBefore, at);
                        }
                        queue.add(new Ready(at, r.chat, r.left));
                    }
                }
            }
            long trips = budget.redisRoundTrips() - before;
            double seconds = (lastGrant - firstCall) / 1e9;
            long over = Math.max(0, delivered - (long) Math.floor(globalBurst + rate * seconds));
            return new Drain(trips, delivered, over);
        }
    }

    /** Counts the commands redis-server executed (INFO commandstats; calls inside scripts included), INFO excluded. */
    static final class CommandStats implements AutoCloseable {
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;

        CommandStats(String url) {
            this.client = RedisClient.create(url);
            this.connection = client.connect();
        }

        /** Calls per command name (lower case, e.g. {@code evalsha}) so far. */
        Map<String, Long> topLevelCalls() {
            Map<String, Long> out = new java.util.HashMap<>();
            for (String line : connection.sync().info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_")) {
                    int colon = line.indexOf(':');
                    int at = line.indexOf("calls=");
                    int end = line.indexOf(',', at);
                    out.put(line.substring(8, colon), Long.parseLong(line.substring(at + 6, end)));
                }
            }
            return out;
        }

        /** CPU used so far by redis-server (INFO cpu, user + sys) and by this JVM (process CPU time), µs. */
        Cpu cpu() {
            double redisSeconds = 0;
            for (String line : connection.sync().info("cpu").split("\r?\n")) {
                if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
                    redisSeconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
                }
            }
            long execMicros = 0;
            for (String line : connection.sync().info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:")) {
                    int at = line.indexOf("usec=");
                    execMicros += Long.parseLong(line.substring(at + 5, line.indexOf(',', at)));
                }
            }
            long jvmNanos = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                    .getOperatingSystemMXBean()).getProcessCpuTime();
            // Lettuce's I/O threads (netty event loops): encoding, writes, reads, decoding and completing futures
            java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
            long loopNanos = 0;
            for (java.lang.management.ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
                if (t != null && t.getThreadName().contains("EventLoop")) {
                    loopNanos += Math.max(0, threads.getThreadCpuTime(t.getThreadId()));
                }
            }
            return new Cpu(Math.round(redisSeconds * 1e6), jvmNanos / 1000, loopNanos / 1000, execMicros);
        }

        long commands() {
            long total = 0;
            for (String line : connection.sync().info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:")) {
                    int at = line.indexOf("calls=");
                    int end = line.indexOf(',', at);
                    total += Long.parseLong(line.substring(at + 6, end));
                }
            }
            return total;
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown();
        }
    }
}
