package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.ManualClock;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.provider.SendOutcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.SplittableRandom;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.sender.idempotency.SentMarks;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class DeliveryProcessorTest {
    private final ManualClock clock = new ManualClock();
    private final Fakes.ScriptedBudget budget = new Fakes.ScriptedBudget();
    private final Fakes.ScriptedTransport transport = new Fakes.ScriptedTransport();
    private final Fakes.RecordingSink sink = new Fakes.RecordingSink();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SenderMetrics metrics = Fakes.metrics(registry);
    private final InMemorySentMarks marks = new InMemorySentMarks(Duration.ofDays(1), clock);
    private final BotSlots slots = new BotSlots(1);
    private final DeliveryProcessor processor = processor(Fakes.config("budget.global.rate.per.s", "1000",
            "budget.global.burst", "1000", "budget.chat.rate.per.s", "1000", "budget.chat.burst", "1000",
            "sender.max.reschedules", "4", "sender.resend.uncertain.classes", "CRITICAL",
            "sender.breaker.window.calls", "4", "sender.breaker.open.ms", "5000"));
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);

    private DeliveryProcessor processor(SenderConfig config) {
        return new DeliveryProcessor(config, budget, transport, sink, marks, metrics, clock, new SplittableRandom(7),
                slots, new ChatRegistry(1000));
    }

    private long count(String name, String... tags) {
        return Fakes.count(registry, name, tags);
    }

    private PendingMessage pending(String id, String chat) {
        return new PendingMessage(tp, 0, Fakes.message(id, chat, clock.instant().minusMillis(50), null));
    }

    private long now() {
        return clock.millis();
    }

    @Test
    void delivered_writes_one_result_with_times_attempts_and_instance() {
        Step step = processor.process(pending("m1", "42"));
        assertThat(step).isEqualTo(Step.DONE);
        DeliveryResult r = sink.results.get(0);
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
        assertThat(r.getMessageId()).isEqualTo("m1");
        assertThat(r.getChatId()).isEqualTo("42");
        assertThat(r.getAttempts()).isEqualTo(1);
        assertThat(r.getProviderMessageId()).isEqualTo(1L);
        assertThat(r.getDueAt()).isEqualTo(clock.instant().minusMillis(50));
        assertThat(r.getSentAt()).isEqualTo(clock.instant());
        assertThat(r.getResultAt()).isEqualTo(clock.instant());
        assertThat(r.getSenderInstance()).isEqualTo("test-1");
        assertThat(count("sluice.sender.results", "status", "DELIVERED")).isEqualTo(1);
        assertThat(marks.get("bot", "m1").state()).isEqualTo(SentMarks.State.SENT);
    }

    @Test
    void an_exception_writing_the_result_after_the_provider_accepted_writes_the_result_again_never_a_second_call() {
        sink.failNext = 1; // the registry refuses the result schema once (F2)
        PendingMessage p = pending("m1", "42");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> processor.process(p))
                .isInstanceOf(dev.sluice.schemas.SchemaRegistryException.class);
        assertThat(slots.hasRoom("bot")).as("the bot slot is back").isTrue();
        clock.advance(Duration.ofMillis(100));
        assertThat(processor.process(p)).isEqualTo(Step.DONE); // the lane's retry
        assertThat(transport.sent).as("provider calls").hasSize(1);
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.getProviderMessageId()).isEqualTo(1L);
            assertThat(r.getAttempts()).isEqualTo(1);
        });
    }

    @Test
    void an_exception_preparing_one_message_of_a_batch_leaves_the_others_their_calls_and_holds_nothing() {
        SentMarks failing = new SentMarks() {
            @Override
            public Mark get(String botId, String messageId) {
                if (messageId.equals("boom")) {
                    throw new IllegalStateException("unexpected answer from the store");
                }
                return marks.get(botId, messageId);
            }

            @Override
            public void markSent(String botId, String messageId, String status, Long providerMessageId) {
                marks.markSent(botId, messageId, status, providerMessageId);
            }

            @Override
            public void markResultWritten(String botId, String messageId, String resultKey) {
                marks.markResultWritten(botId, messageId, resultKey);
            }

            @Override
            public void close() {
            }
        };
        BotSlots two = new BotSlots(2);
        DeliveryProcessor batchProcessor = new DeliveryProcessor(Fakes.config("budget.global.rate.per.s", "1000",
                "budget.global.burst", "1000", "budget.chat.rate.per.s", "1000", "budget.chat.burst", "1000"),
                budget, transport, sink, failing, metrics, clock, new SplittableRandom(7), two, new ChatRegistry(1000));
        List<DeliveryProcessor.Next> next = batchProcessor.processBatch("bot",
                List.of(pending("boom", "41"), pending("ok", "42")));
        assertThat(next.get(0).isCall()).isFalse();
        assertThat(next.get(0).run()).isInstanceOf(Step.RetryAt.class);
        assertThat(next.get(1).isCall()).as("the other message keeps its grant").isTrue();
        assertThat(next.get(1).run()).isEqualTo(Step.DONE);
        assertThat(two.inFlight("bot")).as("no slot held").isZero();
        assertThat(batchProcessor.breakerState("bot")).isEqualTo("CLOSED");
    }

    @Test
    void a_refused_chat_is_rescheduled_at_exactly_the_returned_wait_without_a_call() {
        budget.decisions.add(Decision.refused(1234, Limit.CHAT));
        Step step = processor.process(pending("m1", "42"));
        assertThat(step).isEqualTo(new Step.RetryAt(now() + 1234));
        assertThat(transport.sent).isEmpty();
        assertThat(sink.results).isEmpty();
    }

    @Test
    void a_429_writes_a_penalty_gate_and_reschedules_at_retry_after_plus_one_sided_jitter() {
        transport.script("42", new SendOutcome.RetryAfter(Duration.ofSeconds(3), SendOutcome.PenaltyScope.CHAT, "x"));
        PendingMessage p = pending("m1", "42");
        Step step = processor.process(p);
        assertThat(budget.penalties).containsExactly("42:3000");
        assertThat(((Step.RetryAt) step).readyAtMs()).isBetween(now() + 3000, now() + 3200);
        assertThat(count("sluice.provider.rate.limited", "scope", "chat")).isEqualTo(1);
        clock.advance(Duration.ofSeconds(4));
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.getAttempts()).isEqualTo(2);
        });
    }

    @Test
    void a_throttle_signal_the_transport_scoped_to_the_bot_gates_the_whole_bot_at_once() {
        // an HTTP provider's 429 or soft limit limits its API key: no inference from several chats needed
        transport.script("42", new SendOutcome.RetryAfter(Duration.ofSeconds(2), SendOutcome.PenaltyScope.BOT,
                "soft limit: content type 'text/html'"));
        Step step = processor.process(pending("m1", "42"));
        assertThat(budget.scopes).containsExactly("bot/BOT/42");
        assertThat(((Step.RetryAt) step).readyAtMs()).isBetween(now() + 2000, now() + 2250);
        assertThat(count("sluice.provider.rate.limited", "scope", "global")).isEqualTo(1);
        assertThat(sink.results).as("a throttle signal is never a result").isEmpty();
        // another chat of the bot waits for the gate without calling the provider
        int calls = transport.sent.size();
        Step other = processor.process(pending("m2", "43"));
        assertThat(((Step.RetryAt) other).readyAtMs()).isGreaterThanOrEqualTo(now() + 2000);
        assertThat(transport.sent).hasSize(calls);
    }

    @Test
    void forbidden_is_blocked_and_other_4xx_is_failed() {
        transport.script("1", new SendOutcome.Blocked(403, "Forbidden: bot was blocked by the user"));
        transport.script("2", new SendOutcome.PermanentFailure(400, "Bad Request: chat not found"));
        processor.process(pending("a", "1"));
        processor.process(pending("b", "2"));
        assertThat(sink.results).extracting(DeliveryResult::getStatus)
                .containsExactly(DeliveryStatus.BLOCKED, DeliveryStatus.FAILED);
        assertThat(sink.results).extracting(DeliveryResult::getErrorCode).containsExactly(403, 400);
        assertThat(sink.results.get(1).getReason()).contains("chat not found");
        // the blocked chat is inactive now: its next message ends without a call or budget
        int calls = transport.sent.size();
        int budgetCalls = budget.calls;
        processor.process(pending("c", "1"));
        assertThat(sink.results.get(2).getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
        assertThat(transport.sent).hasSize(calls);
        assertThat(budget.calls).isEqualTo(budgetCalls);
    }

    @Test
    void transient_failures_back_off_with_full_jitter_under_the_cap_then_fail() {
        SendOutcome boom = new SendOutcome.TransientFailure(502, "Bad Gateway", false);
        transport.script("42", boom, boom, boom);
        PendingMessage p = pending("m1", "42");
        Step first = processor.process(p);
        assertThat(((Step.RetryAt) first).readyAtMs()).isBetween(now() + 1, now() + 100);
        Step second = processor.process(p);
        assertThat(((Step.RetryAt) second).readyAtMs()).isBetween(now() + 1, now() + 200);
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
            assertThat(r.getAttempts()).isEqualTo(3);
            assertThat(r.getErrorCode()).isEqualTo(502);
        });
    }

    @Test
    void full_jitter_backoff_never_exceeds_the_cap() {
        for (int failures = 1; failures < 40; failures++) {
            assertThat(processor.fullJitterBackoffMs(failures)).isBetween(1L, 1000L);
        }
    }

    @Test
    void a_message_past_its_deadline_expires_without_spending_budget() {
        PendingMessage p = new PendingMessage(tp, 0, Fakes.message("m1", "42", clock.instant().minusSeconds(20),
                clock.instant().minusSeconds(1)));
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(budget.calls).isZero();
        assertThat(sink.results.get(0).getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
        assertThat(sink.results.get(0).getAttempts()).isZero();
    }

    @Test
    void a_wait_beyond_the_deadline_is_cut_to_the_deadline_where_the_message_expires() {
        Instant deadline = clock.instant().plusSeconds(10);
        transport.script("42", new SendOutcome.RetryAfter(Duration.ofSeconds(18_053), SendOutcome.PenaltyScope.CHAT,
                "Too Many Requests: retry after 18053"));
        PendingMessage p = new PendingMessage(tp, 0, Fakes.message("m1", "42", clock.instant(), deadline));
        assertThat(processor.process(p)).isEqualTo(new Step.RetryAt(deadline.toEpochMilli()));
        clock.setMillis(deadline.toEpochMilli());
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(sink.results.get(0).getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
    }

    @Test
    void an_unknown_bot_fails_with_a_reason_naming_it() {
        PendingMessage p = new PendingMessage(tp, 0, dev.sluice.avro.OutboundMessage.newBuilder(
                Fakes.message("m1", "42", clock.instant(), null)).setBotId("ghost").build());
        processor.process(p);
        assertThat(sink.results.get(0).getStatus()).isEqualTo(DeliveryStatus.FAILED);
        assertThat(sink.results.get(0).getReason()).contains("ghost");
    }

    private PendingMessage pending(OutboundMessage m) {
        return new PendingMessage(tp, 0, m);
    }

    private OutboundMessage.Builder msg(String id, String chat) {
        return OutboundMessage.newBuilder(Fakes.message(id, chat, clock.instant(), null));
    }

    @Test
    void a_read_timeout_after_sending_is_uncertain_for_routine_and_resent_for_critical() {
        SendOutcome timeout = new SendOutcome.TransientFailure(null, "SocketTimeoutException: timeout", true);
        transport.script("42", timeout);
        transport.script("43", timeout);
        processor.process(pending("r", "42"));
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.UNCERTAIN);
            assertThat(r.getAttempts()).isEqualTo(1);
        });
        assertThat(marks.get("bot", "r").status()).isEqualTo("UNCERTAIN");

        PendingMessage critical = pending(msg("c", "43").setEventClass(NotificationClass.CRITICAL).build());
        assertThat(processor.process(critical)).isInstanceOf(Step.RetryAt.class);
        assertThat(processor.process(critical)).isEqualTo(Step.DONE);
        assertThat(sink.results.get(1).getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
        assertThat(sink.results.get(1).getAttempts()).isEqualTo(2);
    }

    @Test
    void a_migrated_group_is_sent_to_its_new_id_and_later_messages_follow() {
        transport.script("-100", new SendOutcome.ChatMigrated(-1001234L, "Bad Request: group chat was upgraded"));
        PendingMessage a = pending("a", "-100");
        assertThat(processor.process(a)).isInstanceOf(Step.RetryAt.class);
        assertThat(processor.process(a)).isEqualTo(Step.DONE);
        processor.process(pending("b", "-100"));
        assertThat(transport.sent).containsExactly("-100/text a", "-1001234/text a", "-1001234/text b");
        // issue 16 (F11): the result names the chat the message was addressed to (the old id) and the new one in
        // migrated_to_chat_id, so the topology learns old -> new under the old id's key
        assertThat(sink.results).extracting(DeliveryResult::getChatId).containsExactly("-100", "-100");
        assertThat(sink.results).extracting(DeliveryResult::getMigratedToChatId).containsExactly("-1001234", "-1001234");
        assertThat(sink.results).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
    }

    @Test
    void a_rejected_token_parks_the_bot_until_the_recheck_and_fails_nothing() {
        SendOutcome rejected = new SendOutcome.TokenRejected(401, "Unauthorized");
        transport.script("42", rejected, rejected, rejected, rejected, rejected, rejected); // more than max.reschedules
        PendingMessage a = pending("a", "42");
        PendingMessage b = pending("b", "43");
        assertThat(processor.process(a)).isEqualTo(new Step.RetryAt(now() + 60_000)); // sender.token.recheck.ms
        assertThat(processor.process(b)).as("another lane of the bot: parked, no call")
                .isEqualTo(new Step.RetryAt(now() + 60_000));
        assertThat(transport.sent).hasSize(1);
        for (int i = 0; i < 5; i++) { // more re-checks than sender.max.reschedules (4): never EXPIRED for the token
            clock.advance(Duration.ofSeconds(60));
            assertThat(processor.process(a)).isEqualTo(new Step.RetryAt(now() + 60_000));
        }
        assertThat(sink.results).as("nothing ends while the token is rejected").isEmpty();
        assertThat(processor.tokenRejections().rejectedBots()).containsExactly("bot");
        clock.advance(Duration.ofSeconds(60));
        assertThat(processor.process(a)).as("the token works again").isEqualTo(Step.DONE);
        assertThat(processor.process(b)).isEqualTo(Step.DONE);
        assertThat(sink.results).extracting(DeliveryResult::getStatus)
                .containsExactly(DeliveryStatus.DELIVERED, DeliveryStatus.DELIVERED);
        assertThat(processor.tokenRejections().rejectedBots()).isEmpty();
    }

    @Test
    void a_retry_after_of_decades_waits_the_cap() {
        transport.script("42", new SendOutcome.RetryAfter(Duration.ofSeconds(2_147_483_647L), SendOutcome.PenaltyScope.CHAT,
                "Too Many Requests: retry after 2147483647"));
        Step step = processor.process(pending("m", "42"));
        assertThat(((Step.RetryAt) step).readyAtMs() - now()).isBetween(3_600_000L, 3_600_000L + 250);
        assertThat(budget.penalties).containsExactly("42:3600000"); // the gate is written at the cap too
    }

    @Test
    void the_reschedule_limit_ends_a_message_as_expired() {
        SendOutcome tooMany = new SendOutcome.RetryAfter(Duration.ofSeconds(1), SendOutcome.PenaltyScope.CHAT, "429");
        transport.script("42", tooMany, tooMany, tooMany, tooMany, tooMany);
        PendingMessage p = pending("m", "42");
        for (int i = 0; i < 5; i++) {
            assertThat(processor.process(p)).isInstanceOf(Step.RetryAt.class);
            clock.advance(Duration.ofSeconds(2));
        }
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
            assertThat(r.getReason()).contains("reschedule limit");
        });
    }

    @Test
    void a_message_marked_sent_is_not_sent_again_and_one_with_its_result_written_gets_no_second_result() {
        marks.markSent("bot", "m1", "DELIVERED", 77L);
        marks.markSent("bot", "m2", "DELIVERED", 78L);
        marks.markResultWritten("bot", "m2");
        assertThat(processor.process(pending("m1", "42"))).isEqualTo(Step.DONE);
        assertThat(processor.process(pending("m2", "42"))).isEqualTo(Step.DONE);
        assertThat(transport.sent).isEmpty();
        assertThat(budget.calls).isZero();
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getMessageId()).isEqualTo("m1");
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.getProviderMessageId()).isEqualTo(77L);
            assertThat(r.getAttempts()).isZero();
        });
        assertThat(sink.alreadyFinished).containsExactly("m2");
    }

    @Test
    void a_pool_message_goes_to_the_first_bot_granted_and_a_429_moves_it_to_the_others() {
        OutboundMessage m = msg("p", "-1009").setBotPool(List.of("b1", "b2", "b3")).build();
        budget.decisions.add(Decision.refused(60_000, Limit.GATE_BOT)); // b1 is under a bot-wide penalty
        transport.script("-1009", new SendOutcome.RetryAfter(Duration.ofSeconds(5), SendOutcome.PenaltyScope.CHAT,
                "Too Many Requests: retry after 5")); // b2 gets a 429
        PendingMessage p = pending(m);
        Step first = processor.process(p);
        assertThat(first).isInstanceOf(Step.RetryAt.class);
        assertThat(((Step.RetryAt) first).readyAtMs()).isLessThanOrEqualTo(now() + 1);
        assertThat(budget.scopes).containsExactly("b2/GROUP/-1009");
        // issue 16: the pool asks its least-loaded bots first; b1's schedule is deferred by its bot-wide gate, so it
        // is asked last now (and not at all, since b3 grants): b2 (its gate), then b3
        budget.decisions.add(Decision.refused(5_000, Limit.GATE_GROUP)); // b2's gate
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(transport.bots).containsExactly("b2", "b3");
        assertThat(sink.results).singleElement().satisfies(r -> assertThat(r.getBotId()).isEqualTo("b3"));
    }

    @Test
    void when_every_bot_of_a_pool_is_refused_the_earliest_wait_decides() {
        OutboundMessage m = msg("p", "42").setBotPool(List.of("b1", "b2", "b3")).build();
        budget.decisions.add(Decision.refused(60_000, Limit.GATE_BOT));
        budget.decisions.add(Decision.refused(700, Limit.GLOBAL));
        budget.decisions.add(Decision.refused(30_000, Limit.GATE_BOT));
        assertThat(processor.process(pending(m))).isEqualTo(new Step.RetryAt(now() + 700));
        assertThat(transport.sent).isEmpty();
    }

    @Test
    void a_bot_with_its_in_flight_slots_taken_parks_the_lane_on_that_bot() {
        assertThat(slots.tryAcquire("bot")).isTrue(); // the one slot (max 1 here) is taken by another call
        assertThat(processor.process(pending("m", "42"))).isEqualTo(new Step.WaitForBot(java.util.Set.of("bot")));
        assertThat(budget.calls).isZero();
        slots.release("bot");
        assertThat(processor.process(pending("m", "42"))).isEqualTo(Step.DONE);
    }

    @Test
    void the_breaker_opens_when_server_errors_dominate_and_lanes_wait_instead_of_calling() {
        SendOutcome boom = new SendOutcome.TransientFailure(502, "Bad Gateway", false);
        for (int i = 0; i < 4; i++) {
            transport.script("c" + i, boom);
            processor.process(pending("m" + i, "c" + i));
        }
        assertThat(processor.breakerState("bot")).isEqualTo("OPEN");
        int calls = transport.sent.size();
        Step step = processor.process(pending("x", "99"));
        assertThat(((Step.RetryAt) step).readyAtMs()).isGreaterThanOrEqualTo(now() + 5000);
        assertThat(transport.sent).hasSize(calls);
        assertThat(budget.calls).isEqualTo(4);
    }

    @Test
    void a_message_marked_sent_whose_result_the_previous_owner_wrote_gets_no_second_result() {
        marks.markSent("bot", "m3", "DELIVERED", 79L, clock.millis(), "42");
        java.util.List<String> asked = new java.util.ArrayList<>();
        processor.resultLookup(new ResultLookup() {
            @Override
            public boolean hasResult(String resultKey, String messageId, long sinceMs) {
                asked.add(resultKey + "/" + messageId + "/" + sinceMs);
                return true;
            }

            @Override
            public void close() {
            }
        });
        assertThat(processor.process(pending("m3", "42"))).isEqualTo(Step.DONE);
        assertThat(asked).containsExactly("42/m3/" + clock.millis());
        assertThat(sink.results).isEmpty();
        assertThat(sink.alreadyFinished).containsExactly("m3");
        assertThat(transport.sent).isEmpty();
    }
}
