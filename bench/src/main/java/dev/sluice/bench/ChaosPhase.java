package dev.sluice.bench;

import dev.sluice.app.demo.DemoReport;
import dev.sluice.app.demo.ReportAnalyzer;
import dev.sluice.app.demo.ReportAnalyzer.ProviderMessage;
import dev.sluice.app.demo.ResultCollector;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramCall;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One fault of {@link Chaos} on its own backlog, and its report (split out of {@link Chaos}, unchanged): it writes the
 * backlog, injects the fault at its moment, waits until the backlog settles, then counts from what FakeTelegram and
 * {@code delivery.results} really hold: lost, order violations, seconds over a limit, duplicates, the killed sender's
 * in-flight messages, recovery.
 *
 * <p>Single-threaded (the bench's main thread); the infrastructure and collector it reads are shared with the scenario.
 */
final class ChaosPhase {
    private final Infra infra;
    private final ResultCollector collector;
    private final String providerBot;
    private final int messages;
    private final double rate;

    ChaosPhase(Infra infra, ResultCollector collector, String providerBot, int messages, double rate) {
        this.infra = infra;
        this.collector = collector;
        this.providerBot = providerBot;
        this.messages = messages;
        this.rate = rate;
    }

    Chaos.FaultResult run(String fault, int index, Chaos.Injector injector, Duration faultAt) throws Exception {
        int chats = Math.min(Chaos.CHATS, Math.max(1, messages / 3));
        Workload w = Workload.roundRobin(fault, Chaos.BOT, 1_000_000L * index, chats, (int) Math.ceil((double) messages / chats));
        int callsBefore = infra.telegram.calls().size();
        Infra.say("%s: %d messages to %d chats", fault, w.size(), chats);
        long t0 = System.nanoTime();
        infra.produceOutbox(infra.outboxProducer(), w.outbound());
        Thread.sleep(faultAt.toMillis()); // the fault's moment is the scenario, not a wait for a condition
        Chaos.Fault f = injector.inject();
        boolean completed = Settle.await(fault, w.size(), () -> Settle.settled(collector, fault), infra.telegram,
                Duration.ofSeconds(Math.max(180, 4L * w.size() / (long) rate)), Duration.ofSeconds(60));
        double drain = (System.nanoTime() - t0) / 1e9;

        List<FakeTelegramCall> calls = infra.telegram.calls();
        List<FakeTelegramCall> phaseCalls = calls.subList(Math.min(callsBefore, calls.size()), calls.size());
        String prefix = "[" + fault + "]";
        long injectedEnd = f.endMs();
        Set<Integer> injected = new HashSet<>();
        if (f.injectedCalls() > 0) {
            int from = f.callIndex() - callsBefore;
            for (int i = Math.max(0, from); i < phaseCalls.size() && injected.size() < f.injectedCalls(); i++) {
                if (isBot(phaseCalls.get(i))) {
                    injected.add(i);
                    injectedEnd = Math.max(injectedEnd, phaseCalls.get(i).atMillis());
                }
            }
            injectedEnd += Duration.ofSeconds(2).toMillis(); // + the retry_after of the last injected 429
            // the storm's trace: every 429 of the bot, injected or not, with the bot's last acceptance before it
            long lastOk = Long.MIN_VALUE;
            for (int i = 0; i < phaseCalls.size(); i++) {
                FakeTelegramCall c = phaseCalls.get(i);
                if (!isBot(c)) {
                    continue;
                }
                if (c.status() == 200) {
                    lastOk = c.atMillis();
                } else if (c.status() == 429) {
                    Infra.say("%s: 429 %s at %s (chat %s), %s ms after the bot's last acceptance", fault,
                            injected.contains(i) ? "injected" : "NOT injected", java.time.Instant.ofEpochMilli(c.atMillis()),
                            c.chatId(), lastOk == Long.MIN_VALUE ? "-" : Long.toString(c.atMillis() - lastOk));
                }
            }
        }
        Set<Long> secondsOver = new TreeSet<>();
        long provider429 = 0;
        for (int i = 0; i < phaseCalls.size(); i++) {
            FakeTelegramCall c = phaseCalls.get(i);
            if (c.status() == 429 && isBot(c)) {
                provider429++;
                if (!injected.contains(i)) {
                    secondsOver.add(c.atMillis() / 1000);
                    long botLastSecond = phaseCalls.stream().filter(o -> o.status() == 200 && isBot(o)
                            && o.atMillis() > c.atMillis() - 1000 && o.atMillis() <= c.atMillis()).count();
                    long chatLastSecond = phaseCalls.stream().filter(o -> o.status() == 200 && isBot(o)
                            && o.chatId().equals(c.chatId()) && o.atMillis() > c.atMillis() - 1000
                            && o.atMillis() <= c.atMillis()).count();
                    Infra.say("%s: 429 at %s (chat %s): the bot had %d calls accepted in the second before it, the "
                            + "chat %d", fault, java.time.Instant.ofEpochMilli(c.atMillis()), c.chatId(), botLastSecond,
                            chatLastSecond);
                }
            }
        }
        List<ProviderMessage> accepted = Workload.accepted(infra.telegram, fault);
        List<DeliveryResult> results = Settle.results(collector, fault);
        DemoReport report = ReportAnalyzer.analyze(w.notifications(), results, collector.deadLetteredIds(), accepted, provider429, null);
        Set<String> acceptedTexts = new HashSet<>();
        accepted.forEach(m -> acceptedTexts.add(m.chatId() + "|" + m.text()));
        long lost = w.notifications().stream().filter(n -> !acceptedTexts.contains(n.getChatId() + "|" + n.getText())).count();
        long inFlight = f.killedInstance() == null ? 0 : inFlightAtKill(phaseCalls, prefix, results, f);
        double recovery = f.killedInstance() != null
                ? killRecovery(accepted, results, f)
                : recovery(accepted, injectedEnd, rate);
        Infra.say("%s: lost %d, order violations %d, seconds over limit %d, duplicates %d, in flight at kill %d, recovery %.1f s, results %s",
                fault, lost, report.orderViolations(), secondsOver.size(), report.duplicates(), inFlight, recovery, report.results());
        if (lost > 0 || report.duplicates() > 0 || report.orderViolations() > 0) {
            explain(fault, w, accepted, results, phaseCalls, acceptedTexts);
        }
        Map<String, Long> nonZero = new LinkedHashMap<>();
        report.results().forEach((k, v) -> {
            if (v > 0) {
                nonZero.put(k, v);
            }
        });
        return new Chaos.FaultResult(fault, w.size(), lost, report.orderViolations(), secondsOver.size(), report.duplicates(), inFlight,
                recovery, provider429, injected.size(), nonZero, drain, completed);
    }

    private boolean isBot(FakeTelegramCall c) {
        return providerBot.equals(c.botId());
    }

    /** Prints, for up to 10 lost and 10 duplicated messages, their results and provider calls (evidence). */
    static void explain(String fault, Workload w, List<ProviderMessage> accepted, List<DeliveryResult> results,
                        List<FakeTelegramCall> calls, Set<String> acceptedTexts) {
        Map<String, Long> copies = new LinkedHashMap<>();
        accepted.forEach(m -> copies.merge(m.chatId() + "|" + m.text(), 1L, Long::sum));
        int shown = 0;
        for (var n : w.notifications()) {
            String key = n.getChatId() + "|" + n.getText();
            boolean lost = !acceptedTexts.contains(key);
            boolean dup = copies.getOrDefault(key, 0L) > 1;
            if ((lost || dup) && shown++ < 20) {
                Infra.say("  %s %s %s", fault, lost ? "LOST" : "DUPLICATE x" + copies.get(key), n.getId());
                results.stream().filter(r -> r.getMessageId().equals(n.getId())).forEach(r -> Infra.say(
                        "    result %s by %s attempts %d provider_message_id %s sent_at %s result_at %s", r.getStatus(),
                        r.getSenderInstance(), r.getAttempts(), r.getProviderMessageId(), r.getSentAt(), r.getResultAt()));
                calls.stream().filter(c -> n.getText().equals(c.text())).forEach(c -> Infra.say(
                        "    call at %d status %d chat %s", c.atMillis(), c.status(), c.chatId()));
            }
        }
    }

    /**
     * Messages to the chats the killed sender owned with a provider call before it died ({@code f.endMs()}: the
     * process was seen gone; the kill was decided at {@code f.startMs()}, a few ms earlier, and the sender kept
     * calling until the signal landed) and no result decided before then in {@code delivery.results}: what it had in
     * flight (called, result not yet decided, or decided but lost with the process), which a takeover may send again.
     */
    static long inFlightAtKill(List<FakeTelegramCall> calls, String prefix, List<DeliveryResult> results, Chaos.Fault f) {
        Set<String> itsChats = chatsOwnedAtKill(results, f);
        Set<String> calledBeforeKill = new HashSet<>();
        for (FakeTelegramCall c : calls) {
            if (c.atMillis() <= f.endMs() && c.text() != null && c.text().startsWith(prefix) && itsChats.contains(c.chatId())) {
                calledBeforeKill.add(c.chatId() + "|" + c.text());
            }
        }
        // settled before the kill: a result (of any sender) decided before it reached delivery.results; one the
        // killed sender decided but never wrote is lost with it, so that message counts as in flight
        Set<String> resultBeforeKill = new HashSet<>();
        for (DeliveryResult r : results) {
            if (r.getResultAt().toEpochMilli() <= f.endMs()) {
                resultBeforeKill.add(r.getMessageId());
            }
        }
        // texts are "[tag] #seq to chat" and ids "tag-seq": match on the sequence number
        long n = 0;
        for (String key : calledBeforeKill) {
            String text = key.substring(key.indexOf('|') + 1);
            String seq = text.substring(text.indexOf('#') + 1, text.indexOf(' ', text.indexOf('#')));
            String id = prefixToTag(text) + "-" + seq;
            if (!resultBeforeKill.contains(id)) {
                n++;
            }
        }
        return n;
    }

    private static String prefixToTag(String text) {
        return text.substring(1, text.indexOf(']'));
    }

    /**
     * The chats the killed sender owned when it died: those whose last result before the kill it wrote (a
     * chat belongs to one partition, a partition to one sender; ownership at start-up, before the group
     * settled, does not count).
     */
    static Set<String> chatsOwnedAtKill(List<DeliveryResult> results, Chaos.Fault f) {
        Map<String, DeliveryResult> last = new java.util.HashMap<>();
        for (DeliveryResult r : results) {
            if (r.getResultAt().toEpochMilli() <= f.startMs()) {
                last.merge(r.getChatId(), r, (a, b) -> b.getResultAt().isAfter(a.getResultAt()) ? b : a);
            }
        }
        Set<String> chats = new HashSet<>();
        last.forEach((chat, r) -> {
            if (f.killedInstance().equals(r.getSenderInstance())) {
                chats.add(chat);
            }
        });
        return chats;
    }

    /** From the kill until the first message to a chat the killed sender owned is accepted again. */
    static double killRecovery(List<ProviderMessage> accepted, List<DeliveryResult> results, Chaos.Fault f) {
        Set<String> itsChats = chatsOwnedAtKill(results, f);
        return accepted.stream().filter(m -> m.acceptedAtMillis() > f.startMs() && itsChats.contains(m.chatId()))
                .mapToLong(ProviderMessage::acceptedAtMillis).min().stream()
                .mapToDouble(t -> (t - f.startMs()) / 1000.0).findFirst().orElse(-1);
    }

    /**
     * From {@code endMs} until the first 2 s window with at least 80% of {@code rate} accepted; when the
     * backlog ends before that, until the first acceptance after {@code endMs}; -1 when nothing came after.
     */
    static double recovery(List<ProviderMessage> accepted, long endMs, double rate) {
        List<Long> t = accepted.stream().map(ProviderMessage::acceptedAtMillis).filter(x -> x >= endMs).sorted().toList();
        if (t.isEmpty()) {
            return -1;
        }
        int need = (int) Math.ceil(0.8 * rate * 2);
        for (int i = 0, j = 0; i < t.size(); i++) {
            while (j < t.size() && t.get(j) < t.get(i) + 2000) {
                j++;
            }
            if (j - i >= need) {
                return (t.get(i) - endMs) / 1000.0;
            }
        }
        return (t.get(0) - endMs) / 1000.0;
    }
}
