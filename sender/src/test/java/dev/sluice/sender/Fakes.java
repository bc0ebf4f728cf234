package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.telegram.SendOutcome;
import dev.sluice.sender.telegram.Transport;
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

    /** A budget answering from a script of decisions (granted when the script is empty). */
    static final class ScriptedBudget implements BudgetPort {
        final Deque<Decision> decisions = new ArrayDeque<>();
        final List<String> penalties = new ArrayList<>();
        int calls;

        @Override
        public Decision tryAcquire(BudgetRequest request) {
            calls++;
            return decisions.isEmpty() ? Decision.grant() : decisions.poll();
        }

        @Override
        public void penalize(String botId, PenaltyScope scope, String chatId, Duration penalty) {
            penalties.add(chatId + ":" + penalty.toMillis());
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

        @Override
        public SendOutcome send(String botId, String chatId, String text, String parseMode) {
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

        @Override
        public void emit(PendingMessage message, DeliveryResult result) {
            results.add(result);
        }
    }
}
