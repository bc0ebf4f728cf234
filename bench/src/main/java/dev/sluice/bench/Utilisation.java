package dev.sluice.bench;

import dev.sluice.app.demo.DemoReport;
import dev.sluice.app.demo.ReportAnalyzer;
import dev.sluice.app.demo.ReportAnalyzer.ProviderMessage;
import dev.sluice.app.demo.ResultCollector;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTelegramLimits;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Issue 7, scenario {@code utilisation}: one bot, 3 sender processes sharing the Redis budget, a backlog of
 * 5 minutes of sends at the provider's 30 msg/s (9,000 messages over 600 chats) written to
 * {@code outbox.live} before the senders start. Measures what FakeTelegram (Telegram's limits) accepted per
 * second in the steady part of the drain, against the allowed 30/s, and its 429s.
 *
 * <p>Sluice runs by default at the provider's 30/s with reservations ({@code budget.reservation.max.ms=500}; the
 * workload is routine, so its lanes reserve over {@code budget.reservation.routine.max.ms}, 100 ms unless
 * {@code --routine-reservation-ms}) and the arrival guard ({@code budget.arrival.guard.limit.per.s=30}), no global arrival margin (the guard absorbs late
 * arrivals); {@code --budget-rate}, {@code --reservation-ms}, {@code --arrival-guard 0} (then the key's default margin,
 * 50 ms) and {@code --margin-ms} give the other configurations of BENCHMARKS.md.
 *
 * <p>Baseline, same run, another bot: the naive per-replica limiter ({@code budget.mode=local}, every
 * replica allowed the bot's full 30/s, as a replica that believes it is alone would be) on a shorter
 * backlog (60 s of sends by default: it is bounded by the 429 penalties it provokes, not by the budget).
 */
public final class Utilisation {
    static final int ALLOWED_PER_S = 30;

    private Utilisation() {
    }

    /** One drain's numbers. */
    record Drain(String label, int messages, long accepted, double acceptedPerS, double acceptedPerSWithTail,
                 long provider429, long orderViolations,
                 long duplicates, double seconds, boolean completed, long tightestWindowMs, long tightestSentAtMs,
                 long transitP50Ms, long transitP99Ms, long transitMaxMs) {
    }

    public static int run(String[] argv) throws Exception {
        BenchArgs args = BenchArgs.parse(argv);
        int senders = args.integer("senders", 3);
        int backlogSeconds = args.scaled("backlog-seconds", 300, 3);
        int baselineSeconds = args.scaled("baseline-backlog-seconds", 60, 3);
        double budgetRate = args.dbl("budget-rate", ALLOWED_PER_S);
        // Defaults: the configuration that keeps a bot at its limit without a 429 (BENCHMARKS.md, session 4)
        long reservationMs = (long) args.dbl("reservation-ms", 500);
        // routine lanes' horizon (the workload is routine): the sender's default unless told
        long routineReservationMs = (long) args.dbl("routine-reservation-ms",
                dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_ROUTINE_MAX_MS.defaultValue().toMillis());
        long lateMaxMs = (long) args.dbl("late-max-ms", -1);
        int warmupSeconds = args.integer("warmup-seconds", 0);
        int arrivalGuard = args.integer("arrival-guard", ALLOWED_PER_S);
        // the guard absorbs late arrivals by itself, so with it the bot runs at the limit (margin 0); without it the key's
        // default margin applies, as in a sender started with defaults
        long marginMs = (long) args.dbl("margin-ms", arrivalGuard > 0 ? 0
                : dev.sluice.sender.budget.BudgetConfigKeys.DEFAULT_GLOBAL_ARRIVAL_MARGIN_MS);
        int chats = args.integer("chats", 600);
        boolean baseline = !args.flag("no-baseline");
        try (Infra infra = Infra.start(FakeTelegramLimits.telegram())) {
            ResultCollector collector = infra.collector();
            Drain sluice = drain(infra, collector, "util", "u1", "redis", budgetRate, reservationMs, routineReservationMs, lateMaxMs,
                    arrivalGuard,
                    marginMs, warmupSeconds, senders, backlogSeconds * ALLOWED_PER_S, chats);
            Drain naive = baseline
                    ? drain(infra, collector, "naive", "u2", "local", ALLOWED_PER_S, 0, 0, -1, 0, 0, 0, senders, baselineSeconds * ALLOWED_PER_S, chats)
                    : null;

            BenchResult out = new BenchResult("utilisation", "run", "messages", "accepted", "accepted/s (steady)",
                    "accepted/s (with the tail)",
                    "allowed/s", "ratio", "provider 429", "order violations", "duplicates", "drain s", "completed",
                    "tightest 31 calls ms", "tightest 31 sent_at ms", "sent_at -> arrival p50/p99/max ms");
            for (Drain d : naive == null ? List.of(sluice) : List.of(sluice, naive)) {
                out.row(d.label(), d.messages(), d.accepted(), d.acceptedPerS(), d.acceptedPerSWithTail(), ALLOWED_PER_S,
                        d.acceptedPerS() / ALLOWED_PER_S,
                        d.provider429(), d.orderViolations(), d.duplicates(), d.seconds(), d.completed(), d.tightestWindowMs(),
                        d.tightestSentAtMs(), d.transitP50Ms() + "/" + d.transitP99Ms() + "/" + d.transitMaxMs());
            }
            out.put("accepted_per_s", round(sluice.acceptedPerS()))
                    .put("allowed_per_s", ALLOWED_PER_S)
                    .put("ratio", round(sluice.acceptedPerS() / ALLOWED_PER_S))
                    .put("provider_429", sluice.provider429())
                    .put("accepted_per_s_with_tail", round(sluice.acceptedPerSWithTail()))
                    .put("tightest_31_calls_ms", sluice.tightestWindowMs());
            if (naive != null) {
                out.put("baseline", Map.of("accepted_per_s", round(naive.acceptedPerS()), "ratio",
                        round(naive.acceptedPerS() / ALLOWED_PER_S), "provider_429", naive.provider429()));
            }
            out.note("%d sender processes; Sluice budget %.2f msg/s (burst 1), chat 1/s burst 2, budget.reservation.max.ms=%d, budget.reservation.routine.max.ms=%d, budget.reservation.late.max.ms=%s, budget.arrival.guard.limit.per.s=%d, budget.global.arrival.margin.ms=%d; FakeTelegram: 30/s per bot in any sliding 1 s, 1/s per chat burst 3",
                    senders, budgetRate, reservationMs, routineReservationMs, lateMaxMs < 0 ? "(one interval)" : Long.toString(lateMaxMs), arrivalGuard, marginMs);
            if (warmupSeconds > 0) {
                out.note("warm-up: the senders first drained %d s of sends of another bot (warm JVMs, open connections); the measured backlog was written after that",
                        warmupSeconds);
            }
            out.note("tightest 31 calls: the shortest span of 31 consecutive provider calls of the bot (accepted or not); under 1000 ms means a 31st call in one sliding second");
            out.note("steady: accepted messages from 10 s after the first acceptance to 10 s before the last (a fifth of the drain each, if shorter), (n-1)/span; with the tail: to the last acceptance, where fewer than 30 chats have messages left and 1/s per chat caps the rate (before session 4 the only figure)");
            out.emit(args);
            boolean invariants = sluice.orderViolations() == 0 && sluice.duplicates() == 0;
            return sluice.completed() && invariants ? 0 : 2;
        }
    }

    static Drain drain(Infra infra, ResultCollector collector, String tag, String botId, String budgetMode, double rate,
                       long reservationMs, long routineReservationMs, long lateMaxMs, int arrivalGuard, long marginMs, int warmupSeconds, int senders, int messages,
                       int chats)
            throws Exception {
        int chatCount = Math.min(chats, Math.max(1, messages / 3));
        int perChat = (int) Math.ceil((double) messages / chatCount);
        Workload w = Workload.roundRobin(tag, botId, tag.equals("util") ? 1_000_000L : 2_000_000L, chatCount, perChat);
        Infra.say("%s: %d messages to %d chats of bot %s, budget.mode=%s at %.2f/s, %d senders", tag, w.size(), chatCount,
                botId, budgetMode, rate, senders);
        // With a warm-up, the senders first drain warmupSeconds of sends of another bot (JIT, connections), and the
        // measured backlog is written once that is done; without one, it is written before the senders start.
        String warmBot = botId + "w";
        Workload warm = warmupSeconds > 0
                ? Workload.roundRobin("warm" + tag, warmBot, 3_000_000L, chatCount, (int) Math.ceil((double) warmupSeconds * ALLOWED_PER_S / chatCount))
                : null;
        if (warm == null) {
            infra.produceOutbox(infra.outboxProducer(), w.outbound());
        }
        Map<String, String> tokens = Workload.tokens(warm == null ? List.of(botId) : List.of(botId, warmBot));
        String providerBot = FakeTelegram.botIdOf(tokens.get(botId));
        Map<String, String> settings = infra.senderSettings(infra.telegram.apiUrl());
        settings.put("budget.mode", budgetMode);
        settings.put("budget.global.rate.per.s", Double.toString(rate));
        settings.put("budget.chat.burst", "2");
        settings.put("budget.reservation.max.ms", Long.toString(reservationMs));
        settings.put("budget.reservation.routine.max.ms", Long.toString(routineReservationMs));
        settings.put("budget.global.arrival.margin.ms", Long.toString(marginMs));
        settings.put("budget.arrival.guard.limit.per.s", Integer.toString(arrivalGuard)); // 0: off (the default is 30)
        if (lateMaxMs >= 0) {
            settings.put("budget.reservation.late.max.ms", Long.toString(lateMaxMs));
        }
        long t0 = System.nanoTime();
        boolean completed;
        try (Senders s = Senders.start(tag, senders, settings, tokens, infra.workDir, "256m")) {
            if (warm != null) {
                infra.produceOutbox(infra.outboxProducer(), warm.outbound());
                Settle.await("warm" + tag, warm.size(), () -> Settle.settled(collector, "warm" + tag), infra.telegram,
                        Duration.ofSeconds(Math.max(120, 3L * warm.size() / ALLOWED_PER_S)), Duration.ofSeconds(45));
                Infra.say("%s: warm-up of %d messages (bot %s) done, %d x 429; now the measured backlog", tag, warm.size(),
                        warmBot, infra.telegram.rejected429Count(FakeTelegram.botIdOf(tokens.get(warmBot))));
                infra.produceOutbox(infra.outboxProducer(), w.outbound());
                t0 = System.nanoTime();
            }
            completed = Settle.await(tag, w.size(), () -> Settle.settled(collector, tag), infra.telegram,
                    Duration.ofSeconds(Math.max(120, 3L * messages / ALLOWED_PER_S)), Duration.ofSeconds(45));
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (arrivalGuard > 0) {
            // the guard numbers every grant: grants beyond the calls made are slots that passed unused (forfeited)
            io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(infra.redis.url());
            try (var c = client.connect()) {
                String v = c.sync().get(dev.sluice.sender.budget.BudgetKeys.arrivals(botId));
                long calls = infra.telegram.calls().stream().filter(x -> x.botId().equals(providerBot)).count();
                Infra.say("%s: the budget granted %s slots for %d provider calls (arrivals key %s)", tag,
                        v == null ? "?" : v.substring(0, v.indexOf('|')), calls, v);
            } finally {
                client.shutdown();
            }
        }
        List<ProviderMessage> accepted = Workload.accepted(infra.telegram, tag);
        // Where arrivals bunch: the senders' own call times (sent_at, taken right before the provider call) against
        // FakeTelegram's arrival times of the same messages.
        Map<String, String> textById = new java.util.HashMap<>();
        w.notifications().forEach(n -> textById.put(n.getId(), n.getText()));
        Map<String, Long> arrivedAt = new java.util.HashMap<>();
        accepted.forEach(a -> arrivedAt.putIfAbsent(a.text(), a.acceptedAtMillis()));
        List<Long> sentAts = new java.util.ArrayList<>();
        List<Long> transit = new java.util.ArrayList<>();
        for (dev.sluice.avro.DeliveryResult r : Settle.results(collector, tag)) {
            if (r.getSentAt() != null && r.getStatus() == dev.sluice.avro.DeliveryStatus.DELIVERED) {
                sentAts.add(r.getSentAt().toEpochMilli());
                Long at = arrivedAt.get(textById.get(r.getMessageId()));
                if (at != null) {
                    transit.add(at - r.getSentAt().toEpochMilli());
                    if (at - r.getSentAt().toEpochMilli() >= 20) {
                        Infra.say("%s: %s called at %s by %s, arrived %d ms later", tag, r.getMessageId(),
                                java.time.Instant.ofEpochMilli(r.getSentAt().toEpochMilli()), r.getSenderInstance(),
                                at - r.getSentAt().toEpochMilli());
                    }
                }
            }
        }
        say10sBuckets(tag, accepted);
        DemoReport report = ReportAnalyzer.analyze(w.notifications(), Settle.results(collector, tag), collector.deadLetteredIds(),
                accepted, 0, null);
        return new Drain(tag.equals("util") ? "Sluice (shared Redis budget)" : "naive per-replica limiter (local, 30/s each)",
                w.size(), accepted.size(), steadyRate(accepted, true), steadyRate(accepted, false),
                infra.telegram.rejected429Count(providerBot),
                report.orderViolations(), report.duplicates(), seconds, completed,
                tightestSpanMs(infra.telegram.calls().stream().filter(c -> c.botId().equals(providerBot))
                        .map(FakeTelegramCall::atMillis).sorted().toList(), ALLOWED_PER_S + 1),
                tightestSpanMs(sentAts.stream().sorted().toList(), ALLOWED_PER_S + 1),
                Flood.percentile(transit, 0.5), Flood.percentile(transit, 0.99), Flood.percentile(transit, 1.0));
    }

    /** Acceptances per 10 s of FakeTelegram's clock from the first one: where the drain ran below the rate. */
    static void say10sBuckets(String tag, List<ProviderMessage> accepted) {
        if (accepted.isEmpty()) {
            return;
        }
        List<Long> t = accepted.stream().map(ProviderMessage::acceptedAtMillis).sorted().toList();
        long first = t.get(0);
        int[] buckets = new int[(int) ((t.get(t.size() - 1) - first) / 10_000) + 1];
        t.forEach(x -> buckets[(int) ((x - first) / 10_000)]++);
        Infra.say("%s: accepted per 10 s from the first acceptance (the last bucket is partial, %d ms): %s", tag,
                (t.get(t.size() - 1) - first) % 10_000, java.util.Arrays.toString(buckets));
    }

    /** The shortest time between the first and the last of {@code n} consecutive sorted times; -1 if fewer. */
    static long tightestSpanMs(List<Long> sorted, int n) {
        long min = -1;
        for (int i = 0; i + n - 1 < sorted.size(); i++) {
            long span = sorted.get(i + n - 1) - sorted.get(i);
            if (min < 0 || span < min) {
                min = span;
            }
        }
        return min;
    }

    /**
     * (n-1)/span of the acceptances from 10 s (or a fifth of the run, if shorter) after the first one, and with
     * {@code withoutTail} to as long before the last one. The tail is the backlog's last seconds, when fewer chats
     * than the bot's rate have messages left and the provider's 1/s per chat caps the rate.
     */
    static double steadyRate(List<ProviderMessage> accepted, boolean withoutTail) {
        if (accepted.size() < 2) {
            return 0;
        }
        List<Long> t = accepted.stream().map(ProviderMessage::acceptedAtMillis).sorted().toList();
        long first = t.get(0);
        long last = t.get(t.size() - 1);
        long warmup = Math.min(10_000, (last - first) / 5);
        long end = withoutTail ? last - warmup : last;
        List<Long> steady = t.stream().filter(x -> x >= first + warmup && x <= end).toList();
        if (steady.size() < 2 || steady.get(steady.size() - 1).equals(steady.get(0))) {
            return 0;
        }
        return (steady.size() - 1) * 1000.0 / (steady.get(steady.size() - 1) - steady.get(0));
    }

    static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
