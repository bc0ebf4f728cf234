package dev.sluice.bench;

import dev.sluice.app.demo.ResultCollector;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.Settings;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Issue 7, scenario {@code flood}, after a real incident: 9,360 ROUTINE events in 40 s (a bulk change: 360
 * users get 26 "task assigned" events each about one project) with CRITICAL meeting reminders among them
 * (2 per second, to the same users, deadline 10 min). The same events, at the same moments, go to:
 * <ul>
 *   <li>Sluice: the full topology (in this JVM) and 3 sender processes sharing the Redis budget; ROUTINE is
 *       folded into digests under pressure ({@code pressure.drain.time.threshold.ms}, from the senders'
 *       {@code sender.status} reports), CRITICAL is never folded;</li>
 *   <li>the naive baseline ({@link NaiveFifoSender}): one FIFO, no classes, no folding, the same budget
 *       (Sluice's Redis script, same limits), another bot on the same FakeTelegram (its limits are per bot).</li>
 * </ul>
 * Both run at the same time, in real time. Critical latency: from the event's production to the provider's
 * acceptance (Sluice: the result's {@code sent_at}), p99 nearest rank. {@code routine_folded_share}: the
 * ROUTINE events that reached users inside a digest rather than one by one.
 *
 * <p>Before it, the same incident (shape and rate) to other users, {@code --warmup-seconds} long (default: as long as
 * the flood), settled to the last result: the flood then meets what a running system has (the JIT compiler done
 * with the paths it takes: issue 21's cold runs spent a third of both cores in the bench JVM's C2 thread during the
 * flood, and their slowest reminders through the topology were the first ones). {@code --warmup-seconds 0} measures
 * that cold start. The JSON also carries the compiler threads' share of the CPU from the flood's start until it
 * settled ({@link JitCpu}, this JVM and the senders).
 *
 * <p>{@code --scale X} multiplies the event counts and the 40 s alike (same arrival rate), so the naive
 * backlog, and its critical p99, shrink by X too: a p99 of a scaled run is not the full run's.
 */
public final class Flood {
    private Flood() {
    }

    public static int run(String[] argv) throws Exception {
        BenchArgs args = BenchArgs.parse(argv);
        double scale = args.scale();
        int routine = args.scaled("routine", 9_360, 26);
        int users = Math.max(1, (int) Math.round(360 * Math.min(1, scale)));
        double seconds = 40 * scale;
        int criticals = Math.max(2, (int) Math.round(2 * seconds));
        double rate = args.dbl("budget-rate", 25);
        int senders = args.integer("senders", 3);
        String threshold = args.string("pressure-threshold-ms", "2000");
        String digestFlushMs = args.string("digest-flush-ms", "60000");
        // --warmup-seconds W: an incident of the same shape and rate, W s long, to other users before the measured one
        // (0: only the short warm-up, so the flood meets a JIT that has compiled almost nothing of its paths)
        double warmupSeconds = args.dbl("warmup-seconds", seconds);
        // --no-baseline: no naive FIFO (its row is empty), so a run ends when Sluice has settled
        boolean baseline = !args.flag("no-baseline");

        try (Infra infra = Infra.start(FakeTelegramLimits.telegram())) {
            ResultCollector collector = infra.collector();
            Map<String, String> tokens = Workload.tokens(List.of("flood", "naive"));
            Settings topo = Settings.of(Map.of("bootstrap.servers", infra.kafka.bootstrapServers(),
                    "schema.registry.url", infra.registry.url(), "application.id", "bench-flood",
                    "state.dir", infra.workDir.resolve("streams").toString(), "commit.interval.ms", "100",
                    "pressure.drain.time.threshold.ms", threshold, "digest.flush.interval.ms", digestFlushMs));
            for (Map.Entry<String, String> e : args.topologySettings().entrySet()) {
                topo = topo.with(e.getKey(), e.getValue());
            }
            TopologyService topology = infra.track(new TopologyService(TopologyConfig.from(topo)));
            topology.start();
            Map<String, String> settings = infra.senderSettings(infra.telegram.apiUrl());
            settings.put("budget.global.rate.per.s", Double.toString(rate));
            settings.put("budget.chat.burst", "2");
            settings.put("sender.status.interval.ms", "1000");
            Map<String, String> sluiceTokens = Map.of("flood", tokens.get("flood"));
            try (Senders group = Senders.start("flood", senders, settings, sluiceTokens, infra.workDir, "256m");
                 NaiveFifoSender naive = !baseline ? null : new NaiveFifoSender(infra.redis.url(), new BudgetLimits(rate, 1, 1.0, 2),
                         infra.telegram.apiUrl(), tokens.get("naive"));
                 OutboxWatcher outbox = new OutboxWatcher(infra)) {
                Infra.say("flood: %d routine events to %d users and %d critical reminders in %.0f s; budget %.1f/s for both",
                        routine, users, criticals, seconds, rate);
                warmUp(infra, collector);
                if (warmupSeconds > 0) {
                    int preRoutine = (int) Math.round(routine * warmupSeconds / seconds);
                    int preCriticals = Math.max(1, (int) Math.round(criticals * warmupSeconds / seconds));
                    Infra.say("warm-up incident: %d routine events to %d other users and %d critical reminders in %.1f s",
                            preRoutine, users, preCriticals, warmupSeconds);
                    List<Notification> pre = produce(infra, null, Phase.WARM_UP, preRoutine, users, preCriticals, warmupSeconds);
                    if (!Settle.await("warm-up incident", pre.size(), () -> Settle.settled(collector, Phase.WARM_UP.tag()),
                            infra.telegram, Duration.ofSeconds(600), Duration.ofSeconds(150))) {
                        throw new IllegalStateException("the warm-up incident did not settle: no flood measured");
                    }
                }
                JitCpu.Window benchJit = JitCpu.window(() -> ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO),
                        List.of(ProcessHandle.current().pid()));
                JitCpu.Window senderJit = JitCpu.window(group::cpu, group.pids());
                List<Notification> produced = produce(infra, naive, Phase.FLOOD, routine, users, criticals, seconds);
                long routineCount = produced.stream().filter(n -> n.getEventClass() == NotificationClass.ROUTINE).count();
                boolean sluiceDone = Settle.await("sluice", produced.size(), () -> Settle.settled(collector, Phase.FLOOD.tag()), infra.telegram,
                        Duration.ofSeconds(600), Duration.ofSeconds(150));
                double benchJitShare = benchJit.share();
                double senderJitShare = senderJit.share();
                boolean naiveDone = !baseline || Settle.await("naive", produced.size(), naive::sentCount, infra.telegram,
                        Duration.ofSeconds((long) (produced.size() / rate * 1.5) + 120), Duration.ofSeconds(60));
                if (naive != null) {
                    naive.throwIfFailed();
                }

                Map<String, Long> createdAt = produced.stream().collect(Collectors.toMap(Notification::getId,
                        n -> n.getCreatedAt().toEpochMilli()));
                List<DeliveryResult> results = collector.results();
                List<Long> critical = new ArrayList<>();
                List<Long> topologyPart = new ArrayList<>();
                List<Long> senderPart = new ArrayList<>();
                List<String> slowest = new ArrayList<>();
                List<long[]> topologyTimes = new ArrayList<>(); // {produced at ms, topology part ms}
                long criticalNotDelivered = 0;
                long foldedRoutine = 0;
                Set<String> routineIds = produced.stream().filter(n -> n.getEventClass() == NotificationClass.ROUTINE)
                        .map(Notification::getId).collect(Collectors.toSet());
                for (DeliveryResult r : results) {
                    if (r.getEventClass() == NotificationClass.CRITICAL && r.getFoldedIds().isEmpty() && createdAt.containsKey(r.getMessageId())) {
                        if (r.getStatus() == DeliveryStatus.DELIVERED && r.getSentAt() != null) {
                            long created = createdAt.get(r.getMessageId());
                            long sent = r.getSentAt().toEpochMilli();
                            critical.add(sent - created);
                            Long seen = outbox.seenAtMs(r.getMessageId());
                            if (seen != null) {
                                topologyPart.add(seen - created);
                                topologyTimes.add(new long[] {created, seen - created});
                                senderPart.add(sent - seen);
                                if (sent - created > 2000) {
                                    long chatSendsWhileWaiting = infra.telegram.accepted().stream()
                                            .filter(a -> a.chatId().equals(r.getChatId()) && a.acceptedAtMillis() >= seen
                                                    && a.acceptedAtMillis() < sent)
                                            .count();
                                    slowest.add(String.format(Locale.ROOT, "%s: total %d ms = topology %d ms + sender %d ms;"
                                                    + " attempts %d; %d earlier messages of its chat sent while it waited",
                                            r.getMessageId(), sent - created, seen - created, sent - seen, r.getAttempts(),
                                            chatSendsWhileWaiting));
                                }
                            }
                        } else {
                            criticalNotDelivered++;
                        }
                    }
                    foldedRoutine += r.getFoldedIds().stream().filter(routineIds::contains).count();
                }
                critical.sort(null);
                long sluiceP99 = percentile(critical, 0.99);
                long sluiceMax = critical.isEmpty() ? -1 : critical.get(critical.size() - 1);
                long sluiceP50 = percentile(critical, 0.5);
                long sluiceOver2s = critical.stream().filter(ms -> ms > 2000).count();
                List<NaiveFifoSender.Sent> naiveSent = naive == null ? List.of() : naive.sent();
                List<Long> naiveCritical = naiveSent.stream().filter(x -> x.notification().getEventClass() == NotificationClass.CRITICAL)
                        .map(NaiveFifoSender.Sent::latencyMillis).sorted().toList();
                long naiveP50 = percentile(naiveCritical, 0.5);
                long naiveOver2s = naiveCritical.stream().filter(ms -> ms > 2000).count();
                long naiveP99 = NaiveFifoSender.criticalP99(naiveSent);
                long naiveRoutineLast = naiveSent.isEmpty() ? -1000 : naiveSent.stream().mapToLong(NaiveFifoSender.Sent::acceptedAtMillis).max()
                        .orElse(0) - produced.get(0).getCreatedAt().toEpochMilli();
                double share = routineCount == 0 ? 0 : (double) foldedRoutine / routineCount;
                long digests = results.stream().filter(r -> !r.getFoldedIds().isEmpty()).count();
                long sluiceMessages = infra.telegram.accepted().stream().filter(a -> a.botId().equals(FakeTelegram.botIdOf(tokens.get("flood")))
                        && (a.text() == null || !a.text().startsWith("[fw]"))).count();

                BenchResult out = new BenchResult("flood", "sender", "critical p99 ms", "critical p50 ms", "criticals over 2 s", "critical max ms", "criticals delivered",
                        "routine folded share", "provider messages", "provider 429", "all sent after s", "completed");
                out.row("Sluice (topology + " + senders + " senders)", sluiceP99, sluiceP50, sluiceOver2s, sluiceMax, critical.size() + "/" + criticals
                                + (criticalNotDelivered > 0 ? " (" + criticalNotDelivered + " not delivered)" : ""), share,
                        sluiceMessages + " (" + digests + " digests)", infra.telegram.rejected429Count(FakeTelegram.botIdOf(tokens.get("flood"))),
                        "-", sluiceDone);
                out.row("naive FIFO (no classes, no folding)", naiveP99, naiveP50, naiveOver2s,
                        naiveSent.stream().filter(s -> s.notification().getEventClass() == NotificationClass.CRITICAL)
                                .mapToLong(NaiveFifoSender.Sent::latencyMillis).max().orElse(-1),
                        naiveSent.stream().filter(s -> s.notification().getEventClass() == NotificationClass.CRITICAL).count() + "/" + criticals,
                        0.0, naiveSent.size(), infra.telegram.rejected429Count(FakeTelegram.botIdOf(tokens.get("naive"))),
                        naiveRoutineLast / 1000.0, naiveDone);
                out.put("sluice_critical_p99_ms", sluiceP99)
                        .put("naive_critical_p99_ms", naiveP99)
                        .put("routine_folded_share", Utilisation.round(share));
                out.note("budget %.1f msg/s burst 1, chat 1/s burst 2 for both; pressure.drain.time.threshold.ms=%s, sender.status.interval.ms=1000,"
                        + " digest.flush.interval.ms=%s; critical latency = production -> provider acceptance; %d warm-up notifications (a fifth reminders) delivered before the flood (not counted)",
                        rate, threshold, digestFlushMs, WARM_UP_MESSAGES);
                out.note("Sluice criticals, produced -> committed on outbox.live (topology): p50 %d ms, p99 %d ms; committed -> accepted (sender): p50 %d ms, p99 %d ms",
                        percentile(topologyPart, 0.5), percentile(topologyPart, 0.99), percentile(senderPart, 0.5), percentile(senderPart, 0.99));
                if (!args.topologySettings().isEmpty()) {
                    out.note("topology settings (--topology-settings): %s", args.topologySettings());
                }
                slowest.forEach(line -> out.note("over 2 s: %s", line));
                out.note("JIT compiler threads' share of the CPU from the flood's start until Sluice settled (JitCpu, a lower bound):"
                        + " this JVM (topology, broker, FakeTelegram) %.3f, the senders %.3f; warm-up incident %.1f s", benchJitShare,
                        senderJitShare, warmupSeconds);
                long floodStartMs = produced.isEmpty() ? 0 : produced.get(0).getCreatedAt().toEpochMilli();
                out.note("slowest criticals through the topology (ms, produced at s into the flood, which started at %s): %s",
                        Instant.ofEpochMilli(floodStartMs), topologyTimes.stream()
                        .sorted((a, b) -> Long.compare(b[1], a[1])).limit(5)
                        .map(t -> String.format(Locale.ROOT, "%d at %.3f", t[1], (t[0] - floodStartMs) / 1000.0))
                        .collect(Collectors.joining(", ")));
                out.put("sluice_critical_topology_p99_ms", percentile(topologyPart, 0.99))
                        .put("sluice_critical_sender_p99_ms", percentile(senderPart, 0.99))
                        .put("warmup_seconds", warmupSeconds)
                        .put("bench_jvm_jit_cpu_share", Utilisation.round(benchJitShare))
                        .put("sender_jit_cpu_share", Utilisation.round(senderJitShare));
                out.emit(args);
                return sluiceDone && naiveDone ? 0 : 2;
            }
        }
    }

    static final int WARM_UP_MESSAGES = 120;

    /**
     * One incident's ids and users: routine {@code <tag>-<n>}, critical {@code <tag>-c<n>}, users from {@code userBase}.
     * The warm-up incident has the measured one's shape and rate, to users the flood does not touch.
     */
    record Phase(String tag, long userBase) {
        static final Phase FLOOD = new Phase("fl", 5_000_000L);
        static final Phase WARM_UP = new Phase("fp", 6_000_000L);
    }

    /**
     * The incident hits a running system, not one that is starting: 120 notifications (a fifth of them reminders) to
     * 60 other users go through the
     * topology and the senders first (stream threads assigned, the first transactions and the repartition topic's
     * metadata done, provider connections open), and the flood starts once all of them are delivered. Warm-up
     * results carry the tag {@code fw} and are not counted.
     */
    static void warmUp(Infra infra, ResultCollector collector) throws InterruptedException {
        try (KafkaProducer<String, Notification> producer = new KafkaProducer<>(infra.producerProps(), new StringSerializer(),
                new SpecificAvroSerde<>(infra.client, Notification.class).serializer())) {
            for (int i = 0; i < WARM_UP_MESSAGES; i++) {
                // every fifth a reminder, the rest routine: both paths of the topology run before the incident
                String user = Long.toString(4_000_000L + i % 60);
                Instant now = Instant.now();
                boolean critical = i % 5 == 0;
                producer.send(new ProducerRecord<>(infra.topics.notifications(), user, Notification.newBuilder()
                        .setId("fw-" + i).setBotId("flood").setChatId(user).setUserId(user)
                        .setKind(critical ? "meeting.reminder" : "task.assigned")
                        .setEventClass(critical ? NotificationClass.CRITICAL : NotificationClass.ROUTINE)
                        .setEntity("warm-up-" + i).setText("[fw] warm-up #" + i).setCreatedAt(now)
                        .setExpiresAt(critical ? now.plus(Duration.ofMinutes(10)) : null).build()));
                Thread.sleep(50); // 20/s, under the budget: no backlog, so no pressure before the incident
            }
            producer.flush();
        }
        if (!Settle.await("warm-up", WARM_UP_MESSAGES, () -> Settle.settled(collector, "fw"), infra.telegram,
                Duration.ofSeconds(120), Duration.ofSeconds(60))) {
            throw new IllegalStateException("the warm-up notifications were not all delivered within 120 s");
        }
    }

    /** Nearest-rank percentile of {@code values} (any order), -1 when empty. */
    static long percentile(List<Long> values, double q) {
        if (values.isEmpty()) {
            return -1;
        }
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.get(Math.max(0, (int) Math.ceil(q * sorted.size()) - 1));
    }

    /**
     * Produces the events at their moments (routine evenly spread, criticals every 0.5 s) to Sluice and the naive FIFO
     * (none when {@code naive} is null).
     */
    static List<Notification> produce(Infra infra, NaiveFifoSender naive, Phase phase, int routine, int users, int criticals,
                                      double seconds) throws InterruptedException {
        record Planned(long offsetMs, boolean critical, int seq) {
        }
        List<Planned> plan = new ArrayList<>();
        for (int i = 0; i < routine; i++) {
            plan.add(new Planned((long) (i * seconds * 1000 / routine), false, i));
        }
        for (int i = 0; i < criticals; i++) {
            plan.add(new Planned((long) ((i + 0.5) * seconds * 1000 / criticals), true, i));
        }
        plan.sort((a, b) -> Long.compare(a.offsetMs(), b.offsetMs()));
        List<Notification> produced = new ArrayList<>(plan.size());
        Map<String, Integer> perUser = new HashMap<>();
        try (KafkaProducer<String, Notification> producer = new KafkaProducer<>(infra.producerProps(), new StringSerializer(),
                new SpecificAvroSerde<>(infra.client, Notification.class).serializer())) {
            long start = System.currentTimeMillis();
            for (Planned p : plan) {
                long wait = start + p.offsetMs() - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait); // pacing the incident's arrival schedule
                }
                String user = Long.toString(phase.userBase() + (p.critical() ? (p.seq() * 7L) % users : p.seq() % users));
                Instant now = Instant.now();
                Notification n = p.critical()
                        ? Notification.newBuilder().setId(phase.tag() + "-c" + p.seq()).setBotId("flood").setChatId(user).setUserId(user)
                        .setKind("meeting.reminder").setEventClass(NotificationClass.CRITICAL).setEntity("meeting-" + p.seq())
                        .setText("[" + phase.tag() + "] meeting in 10 min #" + p.seq()).setCreatedAt(now).setExpiresAt(now.plus(Duration.ofMinutes(10))).build()
                        : Notification.newBuilder().setId(phase.tag() + "-" + p.seq()).setBotId("flood").setChatId(user).setUserId(user)
                        .setKind("task.assigned").setEventClass(NotificationClass.ROUTINE).setEntity("project-42")
                        .setText("[" + phase.tag() + "] task " + p.seq() + " assigned to you (#" + perUser.merge(user, 1, Integer::sum) + ")")
                        .setCreatedAt(now).build();
                producer.send(new ProducerRecord<>(infra.topics.notifications(), user, n));
                produced.add(n);
                if (naive != null) {
                    naive.offer(Notification.newBuilder(n).setBotId("naive").build());
                }
            }
            producer.flush();
        }
        return produced;
    }
}
