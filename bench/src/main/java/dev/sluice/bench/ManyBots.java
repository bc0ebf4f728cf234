package dev.sluice.bench;

import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.RedisCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Issue 7, scenario {@code many-bots}: 200 bots, each with a backlog of a minute at its 30 msg/s (60 chats per
 * bot) in {@code outbox.live}, drained by 3 sender processes sharing one Redis. After a warm-up (at least
 * {@code --warmup-seconds}, 120 by default, then in 15 s steps until the senders' JIT compiler threads used at most
 * {@code --settle-jit-share} (0.05) of their CPU over the last step, at most {@code --warmup-max-seconds}, 3 x the
 * minimum: a sender's compiler threads were still a third of its CPU 80 s after start in session 14 and ~30 % for 3
 * minutes in session 23; the output prints the warm-up used and the compiler threads' share of the window) it measures,
 * over a window: messages FakeTelegram accepted per second (all bots), sender CPU per delivered message (the
 * children's user+system CPU from the OS), redis-server CPU per delivered message (INFO cpu), and, in a
 * MONITOR sample after the window, Redis round trips per delivered message (client commands, script-internal
 * calls excluded). Everything (broker, Redis, FakeTelegram, senders) shares this machine's cores.
 *
 * <p>{@code --redis standalone} (default) runs on one redis-server; {@code --redis cluster} on a local 3-primary Redis
 * Cluster (no replicas: the same work per primary as a standalone server), each bot routed to the primary of its
 * slot, with redis-server CPU per delivered message measured per shard; {@code --redis both} runs one after the other
 * in the same invocation and prints them side by side. Single-threaded: each mode's parts are closed before the next.
 * {@code --arrival-guard N} runs the senders with {@code budget.arrival.guard.limit.per.s=N} (default: the sender's
 * default, 30 since session 13, FakeTelegram's calls per sliding second; 0 = off). Other budget keys come from the
 * environment ({@code SLUICE_BUDGET_RESERVATION_MAX_MS=0} and {@code --arrival-guard 0}: the defaults before session
 * 13); the output's note prints the configuration the senders ran with.
 *
 * <p>Issue 19: after the real senders stop, a bare baseline ({@link BareSender}, {@link ManyBotsBaseline}: the same
 * number of JVMs doing only consume, decode, one provider call, produce the result; no Redis) drains the same backlog
 * against the same FakeTelegram limits, and its figures are printed beside the senders' ({@code baseline_*} keys; left
 * out with {@code --no-baseline}; {@code --baseline-senders N}, {@code --baseline-rate-per-bot R} (default 28, over
 * all its JVMs)). Redis commands per message: every client command in the MONITOR sample (EVALSHA, GET, SET, each
 * command of a pipeline, MULTI; by command in {@code redis_commands_per_msg_by_command}), and, over the whole window,
 * {@code INFO commandstats} calls of clients and scripts together. {@code --jfr DIR}: every child runs with JDK Flight
 * Recorder into {@code DIR/<instance>.jfr}, and the top costs over each measured window are printed
 * ({@link JfrSummary}; also {@code DIR/<group>-summary.md}).
 */
public final class ManyBots {
    private ManyBots() {
    }

    /** What one mode measured. */
    private record Measured(String mode, int shards, double perS, double cpuMsPerMsg, double cpuCores, double roundTrips,
                            double evalPerMsg, List<Double> redisUsPerMsgPerShard, long p429, String note,
                            MarkFigures marks, Map<String, Double> commandsPerMsg, double callsInclScriptsPerMsg,
                            ManyBotsBaseline.Figures baseline, double jitCpuShare, JitCpu.Settle.Warmed warmed) {
        double redisUsPerMsgTotal() {
            return redisUsPerMsgPerShard.stream().mapToDouble(Double::doubleValue).sum();
        }

        double redisUsPerMsgMaxShard() {
            return redisUsPerMsgPerShard.stream().mapToDouble(Double::doubleValue).max().orElse(0);
        }
    }

    /**
     * The sent marks the run left, over every shard: MEMORY USAGE per SENT and DONE mark (sampled keys, expiry entry not
     * included), marks alive, and the growth of used_memory from before the senders started per mark (all keys the run
     * wrote, budget keys and expiry entries included: an upper figure).
     */
    private record MarkFigures(long marks, long sentSampled, double sentBytes, long doneSampled, double doneBytes,
                               double keyChars, long dbsize, double usedMemoryGrowthPerMark) {
        static MarkFigures of(List<MarkMemory.Marks> shards, long usedBefore) {
            long marks = 0, sentN = 0, sentB = 0, doneN = 0, doneB = 0, chars = 0, dbsize = 0, used = 0;
            for (MarkMemory.Marks m : shards) {
                marks += m.marks();
                sentN += m.sent().sampled();
                sentB += m.sent().bytes();
                doneN += m.done().sampled();
                doneB += m.done().bytes();
                chars += m.sent().keyChars() + m.done().keyChars();
                dbsize += m.dbsize();
                used += m.usedMemory();
            }
            return new MarkFigures(marks, sentN, sentN == 0 ? 0 : (double) sentB / sentN, doneN,
                    doneN == 0 ? 0 : (double) doneB / doneN, sentN + doneN == 0 ? 0 : (double) chars / (sentN + doneN),
                    dbsize, marks == 0 ? 0 : (double) (used - usedBefore) / marks);
        }
    }

    public static int run(String[] argv) throws Exception {
        BenchArgs args = BenchArgs.parse(argv);
        String redisMode = args.string("redis", "standalone");
        List<String> modes = switch (redisMode) {
            case "standalone", "cluster" -> List.of(redisMode);
            case "both" -> List.of("standalone", "cluster");
            default -> throw new IllegalArgumentException("--redis: one of standalone, cluster, both; was " + redisMode);
        };
        int bots = args.scaled("bots", 200, 2);
        jfrDir(args); // fail on a bad --jfr before anything starts
        BenchResult out = new BenchResult("many-bots", "redis", "bots", "delivered/s", "offered (bots x 30/s)",
                "sender CPU ms/msg", "sender CPU cores busy", "Redis round trips/msg", "budget EVALSHA/msg",
                "redis-server CPU us/msg (all shards)", "per shard", "provider 429");
        List<Measured> all = new ArrayList<>();
        for (String mode : modes) {
            // the baseline uses no Redis: one run of it (beside the first mode) is enough
            Measured m = measure(args, mode, bots, all.isEmpty() && !args.flag("no-baseline"));
            all.add(m);
            out.row(mode + (m.shards() > 1 ? " (" + m.shards() + " primaries)" : ""), bots, m.perS(), bots * 30,
                    m.cpuMsPerMsg(), m.cpuCores(), m.roundTrips(), m.evalPerMsg(), m.redisUsPerMsgTotal(),
                    m.redisUsPerMsgPerShard().stream().map(BenchResult::format).toList(), m.p429());
            ManyBotsBaseline.Figures b = m.baseline();
            if (b != null) {
                out.row("bare baseline (" + b.processes() + " JVMs, no Redis)", bots, b.perS(),
                        String.format(java.util.Locale.ROOT, "paced %.0f/s per bot", b.ratePerBot()), b.cpuMsPerMsg(),
                        b.cpuCores(), b.redisCommandsPerMsg(), 0.0, b.redisUsPerMsg(), "-", b.p429());
                out.note("sender CPU per delivered message: %.2f x the bare baseline's", m.cpuMsPerMsg() / b.cpuMsPerMsg());
                out.note("bare baseline: %d x 429 over its whole run, by scope %s; %s", b.p429(), b.p429ByScope(),
                        b.warmed().describe());
            }
            out.note("%s: JIT compiler threads used %.1f%% of the senders' CPU in the window%s (a lower bound, threads alive "
                    + "at its ends; high: the JIT has not settled, lengthen --warmup-max-seconds)", mode, 100 * m.jitCpuShare(),
                    b == null ? "" : String.format(java.util.Locale.ROOT, ", the baseline's %.1f%%", 100 * b.jitCpuShare()));
            out.note("%s: %s", mode, m.note());
            out.note("%s: client commands per delivered message in the MONITOR sample, by command: %s; INFO commandstats "
                    + "over the window, client and script-internal calls together: %.2f per message", mode,
                    m.commandsPerMsg().entrySet().stream().map(e -> e.getKey() + " " + BenchResult.format(e.getValue()))
                            .toList(), m.callsInclScriptsPerMsg());
            Map<String, Object> j = new java.util.LinkedHashMap<>();
            j.put("delivered_per_s", Utilisation.round(m.perS()));
            j.put("cpu_ms_per_msg", Utilisation.round(m.cpuMsPerMsg()));
            j.put("redis_round_trips_per_msg", Utilisation.round(m.roundTrips()));
            j.put("redis_cpu_us_per_msg", Utilisation.round(m.redisUsPerMsgTotal()));
            j.put("redis_cpu_us_per_msg_per_shard", m.redisUsPerMsgPerShard().stream().map(Utilisation::round).toList());
            j.put("provider_429", m.p429());
            j.put("redis_commands_per_msg_by_command", roundAll(m.commandsPerMsg()));
            j.put("redis_calls_incl_script_per_msg", Utilisation.round(m.callsInclScriptsPerMsg()));
            j.put("jit_cpu_share", Utilisation.round(m.jitCpuShare()));
            j.put("warmup_seconds", m.warmed().seconds());
            if (b != null) {
                j.put("baseline", baselineJson(b));
            }
            Map<String, Object> mk = new java.util.LinkedHashMap<>();
            mk.put("marks", m.marks().marks());
            mk.put("sent_sampled", m.marks().sentSampled());
            mk.put("sent_memory_usage_bytes", Utilisation.round(m.marks().sentBytes()));
            mk.put("done_sampled", m.marks().doneSampled());
            mk.put("done_memory_usage_bytes", Utilisation.round(m.marks().doneBytes()));
            mk.put("key_chars", Utilisation.round(m.marks().keyChars()));
            mk.put("keys_in_redis", m.marks().dbsize());
            mk.put("used_memory_growth_per_mark_bytes", Utilisation.round(m.marks().usedMemoryGrowthPerMark()));
            j.put("sent_marks", mk);
            out.note("%s sent marks: %d alive; MEMORY USAGE (SAMPLES 0, no expiry entry) %.1f B per SENT mark (%d sampled), "
                            + "%.1f B per DONE mark (%d sampled), keys of %.1f chars; used_memory grew %.1f B per mark "
                            + "(all %d keys the run wrote, expiry entries included)", mode, m.marks().marks(),
                    m.marks().sentBytes(), m.marks().sentSampled(), m.marks().doneBytes(), m.marks().doneSampled(),
                    m.marks().keyChars(), m.marks().usedMemoryGrowthPerMark(), m.marks().dbsize());
            if (!modes.equals(List.of("standalone"))) { // the standalone run keeps its original keys
                out.put(mode, j);
            }
        }
        Measured first = all.get(0);
        out.put("bots", bots)
                .put("delivered_per_s", Utilisation.round(first.perS()))
                .put("cpu_ms_per_msg", Utilisation.round(first.cpuMsPerMsg()))
                .put("redis_round_trips_per_msg", Utilisation.round(first.roundTrips()))
                .put("redis_cpu_us_per_msg", Utilisation.round(first.redisUsPerMsgTotal()))
                .put("provider_429", first.p429())
                .put("jit_cpu_share", Utilisation.round(first.jitCpuShare()))
                .put("warmup_seconds", first.warmed().seconds())
                .put("redis_commands_per_msg_by_command", roundAll(first.commandsPerMsg()));
        ManyBotsBaseline.Figures b = first.baseline();
        if (b != null) { // absent with --no-baseline
            out.put("baseline_delivered_per_s", Utilisation.round(b.perS()))
                    .put("baseline_cpu_ms_per_msg", Utilisation.round(b.cpuMsPerMsg()))
                    .put("baseline_redis_round_trips_per_msg", Utilisation.round(b.redisCommandsPerMsg()))
                    .put("baseline_redis_cpu_us_per_msg", Utilisation.round(b.redisUsPerMsg()))
                    .put("baseline_provider_429", b.p429())
                    .put("baseline_jit_cpu_share", Utilisation.round(b.jitCpuShare()))
                    .put("baseline_warmup_seconds", b.warmed().seconds())
                    .put("cpu_vs_baseline", Utilisation.round(b.cpuMsPerMsg() == 0 ? 0 : first.cpuMsPerMsg() / b.cpuMsPerMsg()));
        }
        out.note("redis-server CPU per message: INFO used_cpu_user+used_cpu_sys over the window / messages accepted in it,"
                + " per primary");
        out.emit(args);
        return all.stream().allMatch(m -> m.perS() > 0 && (m.baseline() == null || m.baseline().perS() > 0)) ? 0 : 2;
    }

    private static Map<String, Object> baselineJson(ManyBotsBaseline.Figures b) {
        Map<String, Object> j = new java.util.LinkedHashMap<>();
        j.put("processes", b.processes());
        j.put("rate_per_bot_per_s", Utilisation.round(b.ratePerBot()));
        j.put("delivered_per_s", Utilisation.round(b.perS()));
        j.put("cpu_ms_per_msg", Utilisation.round(b.cpuMsPerMsg()));
        j.put("redis_round_trips_per_msg", Utilisation.round(b.redisCommandsPerMsg()));
        j.put("redis_cpu_us_per_msg", Utilisation.round(b.redisUsPerMsg()));
        j.put("provider_429", b.p429());
        j.put("provider_429_by_scope", b.p429ByScope());
        j.put("jit_cpu_share", Utilisation.round(b.jitCpuShare()));
        j.put("warmup_seconds", b.warmed().seconds());
        return j;
    }

    private static Map<String, Double> roundAll(Map<String, Double> m) {
        Map<String, Double> out = new java.util.LinkedHashMap<>();
        m.forEach((k, v) -> out.put(k, Utilisation.round(v)));
        return out;
    }

    /** {@code --jfr DIR}: the directory the children's flight recordings go to, created; null without it. */
    private static java.nio.file.Path jfrDir(BenchArgs args) throws java.io.IOException {
        String dir = args.string("jfr", null);
        if (dir == null) {
            return null;
        }
        if (dir.equals("true")) {
            throw new IllegalArgumentException("--jfr: needs a directory");
        }
        return java.nio.file.Files.createDirectories(java.nio.file.Path.of(dir).toAbsolutePath());
    }

    /**
     * With {@code --jfr DIR}: the children start with JDK Flight Recorder (the {@code profile} settings: execution
     * samples every 10 ms, allocation samples), written to {@code DIR/<instance>.jfr} when the child exits.
     */
    private static SenderProcess.Kind withJfr(SenderProcess.Kind kind, java.nio.file.Path dir) {
        return dir == null ? kind : kind.withJvmArgs(List.of("-XX:StartFlightRecording=name=bench,settings=profile,"
                + "dumponexit=true,filename=" + dir.resolve("{instance}.jfr")));
    }

    /** Prints and writes ({@code DIR/<prefix>-summary.md}) the top costs of the recordings over the window. */
    private static void summariseJfr(java.nio.file.Path dir, String prefix, long fromMs, long toMs) throws java.io.IOException {
        if (dir == null) {
            return;
        }
        String summary = JfrSummary.summarise(JfrSummary.recordings(dir, prefix), fromMs, toMs, 12);
        java.nio.file.Files.writeString(dir.resolve(prefix + "-summary.md"), summary);
        Infra.say("JFR summary of %s over the measured window (%s):%n%s", prefix, dir.resolve(prefix + "-summary.md"), summary);
    }

    private static Measured measure(BenchArgs args, String mode, int bots, boolean baseline) throws Exception {
        java.nio.file.Path jfr = jfrDir(args);
        int seconds = args.scaled("seconds", 60, 5);
        // at least 120 s (session 14: 15 s gave 0.72 ms CPU/msg, 120 s 0.22 on the same code), then until the JIT settled
        // (session 23: ~30 % of the senders' CPU for 3 minutes, ~5 % after 4), at most 3 x the minimum
        int warmup = args.scaled("warmup-seconds", 120, 3);
        JitCpu.Settle settle = new JitCpu.Settle(warmup, args.integer("warmup-max-seconds", 3 * warmup),
                args.dbl("settle-jit-share", 0.05), 15);
        int sample = args.scaled("monitor-seconds", 10, 2);
        int senders = args.integer("senders", 3);
        int perBot = args.integer("backlog-per-bot", 30 * (settle.maxSeconds() + seconds + sample + 10));
        int chatsPerBot = args.integer("chats-per-bot", 60);
        try (Infra infra = Infra.start(FakeTelegramLimits.telegram())) {
            List<String> botIds = new ArrayList<>();
            for (int b = 0; b < bots; b++) {
                botIds.add("mb" + b);
            }
            Map<String, String> tokens = Workload.tokens(botIds);
            Infra.say("producing %d bots x %d messages (%d chats per bot)", bots, perBot, chatsPerBot);
            try (KafkaProducer<String, OutboundMessage> producer = new KafkaProducer<>(infra.producerProps(), new StringSerializer(),
                    new SpecificAvroSerde<>(infra.client, OutboundMessage.class).serializer())) {
                Instant now = Instant.now();
                for (int k = 0; k < perBot; k++) {
                    for (int b = 0; b < bots; b++) {
                        String chat = Long.toString(10_000_000L + b * 1_000L + k % chatsPerBot);
                        producer.send(new ProducerRecord<>(infra.topics.outboxLive(), chat, OutboundMessage.newBuilder()
                                .setId("mb-" + b + "-" + k).setBotId(botIds.get(b)).setChatId(chat).setKind("bench.many")
                                .setEventClass(NotificationClass.ROUTINE).setText("[mb] " + b + "/" + k).setCreatedAt(now).setDueAt(now)
                                .build()));
                    }
                }
                producer.flush();
            }
            Map<String, String> settings = infra.senderSettings(infra.telegram.apiUrl());
            settings.put("budget.chat.burst", "2");
            // FakeTelegram counts a bot's calls in a sliding second, as Telegram does; the senders run with their
            // defaults (reservations, the arrival guard at 30, the global margin) unless told otherwise
            int arrivalGuard = args.integer("arrival-guard", -1);
            if (arrivalGuard >= 0) {
                settings.put("budget.arrival.guard.limit.per.s", Integer.toString(arrivalGuard));
            }
            BudgetConfig budget = BudgetConfig.from(dev.sluice.config.Settings.of(settings).withEnvironment(System.getenv()));
            List<RedisProbe> shards = new ArrayList<>();
            if (mode.equals("cluster")) {
                RedisCluster cluster = infra.track(RedisCluster.start(3, 0));
                settings.put("redis.url", "redis-cluster://" + cluster.seeds());
                cluster.primaries().forEach(n -> shards.add(new RedisProbe("127.0.0.1", n.port())));
                Infra.say("Redis Cluster: %s", cluster);
            } else {
                shards.add(new RedisProbe(infra.redis.host(), infra.redis.port()));
            }
            long usedBefore = 0;
            for (RedisProbe p : shards) {
                usedBefore += MarkMemory.usedMemory(p.host(), p.port());
            }
            Measured real;
            long windowStart;
            long windowEnd;
            try (Senders s = Senders.start(withJfr(SenderProcess.Kind.SLUICE, jfr), "many-" + mode, senders, settings,
                    tokens, infra.workDir, "512m")) {
                JitCpu.Settle.Warmed warmed = settle.warm(s::cpu, s.pids()); // JIT, partition assignment, lanes filled
                long accepted0 = infra.telegram.accepted().size();
                long cpu0 = s.cpu().toMillis();
                long jit0 = JitCpu.of(s.pids()).toMillis();
                double[] redisCpu0 = cpuOf(shards);
                long evalsha0 = RedisProbe.evalCalls(shards);
                long calls0 = RedisProbe.totalCalls(shards);
                windowStart = System.currentTimeMillis();
                long t0 = System.nanoTime();
                Thread.sleep(seconds * 1000L); // the measured window
                long accepted1 = infra.telegram.accepted().size();
                long cpu1 = s.cpu().toMillis();
                long jit1 = JitCpu.of(s.pids()).toMillis();
                double[] redisCpu1 = cpuOf(shards);
                long evalsha1 = RedisProbe.evalCalls(shards);
                long calls1 = RedisProbe.totalCalls(shards);
                windowEnd = System.currentTimeMillis();
                double window = (System.nanoTime() - t0) / 1e9;
                List<RedisProbe.MonitorSample> samples = RedisProbe.monitorAll(shards, sample * 1000L);
                long startMs = samples.stream().mapToLong(RedisProbe.MonitorSample::startMillis).min().orElse(0);
                long endMs = samples.stream().mapToLong(m -> m.startMillis() + m.millis()).max().orElse(0);
                long inSample = infra.telegram.accepted().stream().filter(a -> a.acceptedAtMillis() >= startMs
                        && a.acceptedAtMillis() < endMs).count();
                requireBacklogLeft(infra.telegram.accepted().size(), (long) bots * perBot, "the senders", "MONITOR sample");
                long clientCommands = samples.stream().mapToLong(RedisProbe.MonitorSample::clientCommands).sum();
                long scriptCalls = samples.stream().mapToLong(RedisProbe.MonitorSample::scriptCalls).sum();
                long delivered = accepted1 - accepted0;
                List<Double> perShard = new ArrayList<>();
                for (int i = 0; i < shards.size(); i++) {
                    perShard.add(delivered == 0 ? 0 : (redisCpu1[i] - redisCpu0[i]) * 1e6 / delivered);
                }
                String note = String.format(java.util.Locale.ROOT, "%d sender JVMs (-Xmx512m, defaults: sender.max.in.flight=16, "
                                + "8 per bot; budget.reservation.max.ms=%d, budget.reservation.routine.max.ms=%d, "
                                + "budget.arrival.guard.limit.per.s=%d, "
                                + "budget.global.arrival.margin.ms=%d), %s, %d s window, %d s MONITOR sample on %d "
                                + "node(s) (%d client commands, %d script-internal calls, %d messages accepted in it)",
                        senders, budget.reservationMax().toMillis(), budget.reservationRoutineMax().toMillis(),
                        budget.arrivalGuardLimitPerS(),
                        budget.globalArrivalMargin().toMillis(), warmed.describe(), seconds, sample, shards.size(), clientCommands, scriptCalls, inSample)
                        + "; provider 429s over the whole run, by scope: " + ProviderTrace.of429s(infra.telegram, 5);
                List<MarkMemory.Marks> marks = new ArrayList<>();
                for (RedisProbe p : shards) {
                    marks.add(MarkMemory.measure(p.host(), p.port(), args.integer("mark-sample", 20_000) / shards.size()));
                }
                Map<String, Double> byCommand = new java.util.TreeMap<>();
                samples.forEach(x -> x.byCommand().forEach((c, n) -> byCommand.merge(c, inSample == 0 ? 0 : (double) n / inSample,
                        Double::sum)));
                real = new Measured(mode, shards.size(), delivered / window,
                        delivered == 0 ? 0 : (double) (cpu1 - cpu0) / delivered, (cpu1 - cpu0) / 1000.0 / window,
                        inSample == 0 ? 0 : (double) clientCommands / inSample,
                        delivered == 0 ? 0 : (double) (evalsha1 - evalsha0) / delivered, perShard,
                        infra.telegram.rejected429Count(), note, MarkFigures.of(marks, usedBefore), byCommand,
                        delivered == 0 ? 0 : (double) (calls1 - calls0) / delivered, null,
                        JitCpu.share(jit1 - jit0, cpu1 - cpu0), warmed);
            }
            summariseJfr(jfr, "many-" + mode, windowStart, windowEnd);
            long stateChanges = SenderLogs.budgetStateChanges(infra.workDir, "many-" + mode, senders);
            long rebuilt = SenderLogs.lines(infra.workDir, "many-" + mode, senders, "budget: building Redis client");
            real = new Measured(real.mode(), real.shards(), real.perS(), real.cpuMsPerMsg(), real.cpuCores(),
                    real.roundTrips(), real.evalPerMsg(), real.redisUsPerMsgPerShard(), real.p429(), real.note()
                    + "; budget state changes in the senders' logs over the whole run (a Redis call that failed or timed "
                    + "out leaves SHARED): " + stateChanges + ", Redis budget clients rebuilt: " + rebuilt, real.marks(),
                    real.commandsPerMsg(),
                    real.callsInclScriptsPerMsg(), null, real.jitCpuShare(), real.warmed());
            if (!baseline) {
                return real;
            }
            ManyBotsBaseline.Figures b = ManyBotsBaseline.measure(infra, withJfr(SenderProcess.Kind.BARE, jfr), settings,
                    tokens, args.integer("baseline-senders", senders), args.dbl("baseline-rate-per-bot", 28), settle, seconds,
                    shards, (long) bots * perBot);
            summariseJfr(jfr, "bare", b.windowStartMs(), b.windowEndMs());
            return new Measured(real.mode(), real.shards(), real.perS(), real.cpuMsPerMsg(), real.cpuCores(),
                    real.roundTrips(), real.evalPerMsg(), real.redisUsPerMsgPerShard(), real.p429(), real.note(),
                    real.marks(), real.commandsPerMsg(), real.callsInclScriptsPerMsg(), b, real.jitCpuShare(), real.warmed());
        }
    }

    /**
     * A window measured after the backlog ran dry measures idle senders (CI, stop 40: a smoke run's warm-up took its
     * maximum and the MONITOR sample saw no message: 0 round trips per message). Refuse the figures instead.
     */
    static void requireBacklogLeft(long acceptedSinceStart, long backlog, String who, String window) {
        if (acceptedSinceStart >= backlog) {
            throw new IllegalStateException(String.format(java.util.Locale.ROOT, "%s delivered the whole backlog (%d "
                    + "messages) before the end of the %s: the figures would measure idle senders; raise --backlog-per-bot "
                    + "or shorten --warmup-max-seconds", who, backlog, window));
        }
    }

    private static double[] cpuOf(List<RedisProbe> shards) throws java.io.IOException {
        double[] out = new double[shards.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = shards.get(i).cpuSeconds();
        }
        return out;
    }
}
