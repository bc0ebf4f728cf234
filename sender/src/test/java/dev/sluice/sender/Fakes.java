package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.sender.provider.Transport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Small test doubles for the processor's ports. */
final class Fakes {
    private Fakes() {
    }

    static OutboundMessage message(String id, String chat, Instant dueAt, Instant expiresAt) {
        return OutboundMessage.newBuilder().setId(id).setBotId("bot").setChatId(chat).setKind("test")
                .setEventClass(NotificationClass.ROUTINE).setText("text " + id).setCreatedAt(dueAt).setDueAt(dueAt)
                .setExpiresAt(expiresAt).build();
    }

    /** A sender config with bots bot, b1, b2, b3 (tokens fake) and the given overrides; local budget mode. */
    static SenderConfig config(String... keyValues) {
        Map<String, String> m = new HashMap<>();
        m.put("bootstrap.servers", "localhost:9");
        m.put("schema.registry.url", "http://localhost:9");
        m.put("sender.instance.id", "test-1");
        m.put("budget.mode", "local");
        for (String bot : List.of("bot", "b1", "b2", "b3")) {
            m.put("bot." + bot + ".token", "1:secret-" + bot);
        }
        m.put("sender.retry.backoff.ms", "100");
        m.put("sender.retry.backoff.max.ms", "1000");
        m.put("sender.retry.after.jitter.ms", "200");
        m.put("sender.max.attempts", "3");
        for (int i = 0; i + 1 < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return SenderConfig.from(dev.sluice.config.Settings.of(m));
    }

    static dev.sluice.metrics.SenderMetrics metrics(io.micrometer.core.instrument.MeterRegistry registry) {
        return dev.sluice.metrics.SenderMetrics.bind(registry, List.of("bot", "b1", "b2", "b3"), BudgetState.SHARED);
    }

    /** Sum of the counters named {@code name} with the given tag pairs. */
    static long count(io.micrometer.core.instrument.MeterRegistry registry, String name, String... tags) {
        return (long) registry.find(name).tags(tags).counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
    }

    /**
     * The base of a test's own budget that decides like budget.lua: always SHARED, and ignoring penalties and close
     * (the tests that extend it decide and record, nothing else).
     */
    abstract static class SharedBudgetFake implements BudgetPort {
        @Override
        public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        }

        @Override
        public BudgetState state() {
            return BudgetState.SHARED;
        }

        @Override
        public void close() {
        }
    }

    /**
     * One bot's global GCRA as budget.lua decides it (burst 1) on a test's clock: a request is granted when the TAT is
     * reached, or, if it may reserve ({@link BudgetRequest#reserveUpTo}), reserved the next free slot within that
     * horizon; else refused GLOBAL with the wait. Tests may move {@link #tatMicros} (other replicas spending the bot).
     * Records each call's instant and chats, and per chat the slots (epoch ms) its grants are for.
     */
    static final class GcraBudget extends SharedBudgetFake {
        private final java.time.Clock clock;
        private final long intervalUs;
        private final boolean reserves;
        long tatMicros;
        final List<Long> callsAtMs = new ArrayList<>();
        final List<List<String>> callChats = new ArrayList<>();
        final Map<String, List<Long>> slotsMs = new HashMap<>();

        GcraBudget(java.time.Clock clock, long intervalUs, boolean reserves) {
            this.clock = clock;
            this.intervalUs = intervalUs;
            this.reserves = reserves;
        }

        @Override
        public Decision tryAcquire(BudgetRequest request) {
            return tryAcquireAll(request.botId(), List.of(request)).get(0);
        }

        @Override
        public List<Decision> tryAcquireAll(String botId, List<BudgetRequest> requests) {
            long nowMs = clock.millis();
            long now = nowMs * 1000;
            callsAtMs.add(nowMs);
            callChats.add(requests.stream().map(BudgetRequest::chatId).toList());
            List<Decision> out = new ArrayList<>();
            for (BudgetRequest r : requests) {
                long wait = Math.max(0, tatMicros - now);
                long waitMs = (wait + 999) / 1000;
                if (wait == 0 || wait <= r.reserveUpTo().toNanos() / 1000) {
                    tatMicros = Math.max(tatMicros, now) + intervalUs;
                    slotsMs.computeIfAbsent(r.chatId(), c -> new ArrayList<>()).add(nowMs + waitMs);
                    out.add(waitMs == 0 ? Decision.grant() : Decision.reserved(waitMs));
                } else {
                    out.add(Decision.refused(waitMs, dev.sluice.sender.budget.Limit.GLOBAL));
                }
            }
            return out;
        }

        @Override
        public boolean reserves() {
            return reserves;
        }
    }

    /** A budget answering from a script of decisions (granted when the script is empty). */
    static final class ScriptedBudget implements BudgetPort {
        final Deque<Decision> decisions = new ArrayDeque<>();
        final List<String> penalties = new ArrayList<>();
        final List<String> scopes = new ArrayList<>();
        final List<BudgetRequest> requests = new ArrayList<>();
        int calls;

        @Override
        public Decision tryAcquire(BudgetRequest request) {
            calls++;
            requests.add(request);
            return decisions.isEmpty() ? Decision.grant() : decisions.poll();
        }

        @Override
        public void penalize(String botId, PenaltyScope scope, String chatId, Duration penalty) {
            penalties.add(chatId + ":" + penalty.toMillis());
            scopes.add(botId + "/" + scope + "/" + chatId);
        }

        @Override
        public BudgetState state() {
            return BudgetState.SHARED;
        }

        @Override
        public void close() {
        }
    }

    /** A transport answering per chat from a script, Delivered when nothing is scripted; records calls. */
    static class ScriptedTransport implements Transport {
        final Map<String, Deque<SendOutcome>> perChat = new HashMap<>();
        final List<String> sent = new ArrayList<>();
        Function<String, Long> clockMs = c -> 0L;
        final List<Long> sentAt = new ArrayList<>();
        long nextId = 1;

        void script(String chat, SendOutcome... outcomes) {
            perChat.computeIfAbsent(chat, c -> new ArrayDeque<>()).addAll(List.of(outcomes));
        }

        final List<String> bots = new ArrayList<>();

        @Override
        public SendOutcome send(String botId, String chatId, String text, String parseMode) {
            bots.add(botId);
            sent.add(chatId + "/" + text);
            sentAt.add(clockMs.apply(chatId));
            Deque<SendOutcome> q = perChat.get(chatId);
            return q == null || q.isEmpty() ? new SendOutcome.Delivered(nextId++) : q.poll();
        }

        @Override
        public void close() {
        }
    }

    static final class RecordingSink implements ResultSink {
        final List<DeliveryResult> results = new ArrayList<>();
        final List<String> alreadyFinished = new ArrayList<>();
        /** The next this many emits throw, as a serializer does when the registry refuses the schema. */
        int failNext;

        @Override
        public void emit(PendingMessage message, DeliveryResult result) {
            if (failNext > 0) {
                failNext--;
                throw new dev.sluice.schemas.SchemaRegistryException(403, 40303, "cannot register schema: 403", false, null);
            }
            results.add(result);
        }

        @Override
        public void alreadyFinished(PendingMessage message) {
            alreadyFinished.add(message.message().getId());
        }
    }
}
