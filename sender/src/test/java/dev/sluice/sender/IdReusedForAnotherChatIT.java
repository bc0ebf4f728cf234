package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.sender.idempotency.RedisSentMarks;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The notification id is the idempotency key, unique per bot (found by an outside trial): a message whose (bot, id) sent
 * mark was written for ANOTHER chat is not a redelivery. It is not sent and ends FAILED with a reason, instead of no result
 * (DONE), a DELIVERED for a message never sent (SENT), or a send that overwrites the other chat's mark (FLIGHT). A genuine
 * redelivery (same chat, or the chat a migration re-addressed the message from) behaves as before.
 *
 * <p>A real redis-server, the real {@link DeliveryProcessor}, {@link RedisSentMarks} and {@link KafkaResultSink} (on a
 * {@link MockProducer}): the marks are the ones the sender's own path writes. Both mark reads: {@code folded} = the budget
 * in the same Redis reads the mark in its Lua decision (ALREADY_SENT carries the mark's value); otherwise the synchronous
 * GET of {@code Outcomes#checkSentMark}.
 */
class IdReusedForAnotherChatIT {
    private static final long TTL_MS = Duration.ofHours(1).toMillis();
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);
    private final Fakes.ScriptedTransport transport = new Fakes.ScriptedTransport();
    private final OffsetTracker offsets = new OffsetTracker();
    private final List<String> alreadyFinished = new ArrayList<>();
    private final List<String> lookups = new ArrayList<>();
    private RedisInstance redis;
    private RedisClient client;
    private StatefulRedisConnection<String, String> direct;
    private RedisGcraBudget redisBudget;
    private RedisSentMarks marks;
    private MockProducer<String, DeliveryResult> producer;
    private KafkaResultSink results;
    private DeliveryProcessor processor;
    private boolean folded;
    /** Whether the result lookup finds the results this test wrote (else it finds none: the owner died before). */
    private boolean resultsOnTopic;
    private long nextOffset;

    @BeforeEach
    void startRedis() {
        redis = RedisLauncher.localProcess().launch();
        client = RedisClient.create(redis.url());
        direct = client.connect();
    }

    @AfterEach
    void stop() {
        if (results != null) {
            results.close();
        }
        if (marks != null) {
            marks.close();
        }
        if (redisBudget != null) {
            redisBudget.close();
        }
        direct.close();
        client.shutdown();
        redis.close();
    }

    /**
     * @param folded the budget reads (and writes) the marks in its own script calls; else the marks are read with a GET
     * @param acks   whether the result writes are acknowledged (then the mark is raised to DONE)
     */
    private void wire(boolean folded, boolean acks) {
        this.folded = folded;
        SenderConfig config = Fakes.config("budget.global.rate.per.s", "1000", "budget.global.burst", "1000",
                "budget.chat.rate.per.s", "1000", "budget.chat.burst", "1000",
                "sender.sent.mark.ttl.ms", Long.toString(TTL_MS), "sender.sent.mark.flush.interval.ms", "3600000",
                "budget.arrival.guard.limit.per.s", "0");
        redisBudget = new RedisGcraBudget(redis.url(), config.budgetConfig(), Duration.ofSeconds(2));
        marks = new RedisSentMarks(redis.url(), Duration.ofMillis(TTL_MS), Duration.ofSeconds(2));
        BudgetPort budget = redisBudget;
        if (folded) {
            assertThat(SenderWiring.foldMarkWrites(config, redisBudget, marks)).isTrue();
        } else {
            budget = new Fakes.GcraBudget(Clock.systemUTC(), 1, false); // not in the marks' Redis: a GET per message
        }
        producer = new MockProducer<>(acks, null, new StringSerializer(), (topic, r) -> new byte[0]);
        results = new KafkaResultSink(producer, "delivery.results", offsets, marks, Duration.ofMillis(10),
                new SimpleMeterRegistry(), "test-1");
        ResultSink sink = new ResultSink() {
            @Override
            public void emit(PendingMessage message, DeliveryResult result) {
                results.emit(message, result);
            }

            @Override
            public void alreadyFinished(PendingMessage message) {
                alreadyFinished.add(message.message().getId() + "@" + message.message().getChatId());
                results.alreadyFinished(message);
            }
        };
        processor = new DeliveryProcessor(config, budget, transport, sink, marks,
                Fakes.metrics(new SimpleMeterRegistry()), Clock.systemUTC(), new SplittableRandom(7), new BotSlots(8),
                new ChatRegistry(1000));
        processor.resultLookup(new ResultLookup() {
            @Override
            public boolean hasResult(String resultKey, String messageId, long sinceMs) {
                lookups.add(messageId + "@" + resultKey);
                return resultsOnTopic && results().stream().anyMatch(r -> r.getMessageId().equals(messageId)
                        && r.getChatId().equals(resultKey) && r.getResultAt().toEpochMilli() >= sinceMs);
            }

            @Override
            public void close() {
            }
        });
    }

    @ParameterizedTest(name = "folded={0}")
    @ValueSource(booleans = {true, false})
    void anIdWhoseResultIsWrittenForAnotherChatEndsFailedAndItsOwnChatsRedeliveryHasNoSecondResult(boolean folded) {
        wire(folded, true);
        assertThat(run(message("r1", "42"))).isEqualTo(Step.DONE);
        awaitMark("r1", "DONE|");
        assertThat(run(message("r1", "43"))).isEqualTo(Step.DONE);
        assertThat(run(message("r1", "42"))).as("a redelivery of 42's message").isEqualTo(Step.DONE);

        assertThat(transport.sent).containsExactly("42/text r1");
        assertThat(results()).hasSize(2);
        assertThat(results().get(0).getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
        assertReuseFailed(results().get(1), "r1", "43");
        assertThat(alreadyFinished).containsExactly("r1@42");
        assertThat(mark("r1")).as("42's mark is kept").startsWith("DONE|").endsWith("|42");
    }

    @ParameterizedTest(name = "folded={0}")
    @ValueSource(booleans = {true, false})
    void anIdSentForAnotherChatWhoseResultWasNotWrittenEndsFailedNotDelivered(boolean folded) {
        wire(folded, false); // no acknowledgement: the mark stays SENT, as after an owner killed before its result
        assertThat(run(message("s1", "42"))).isEqualTo(Step.DONE);
        if (folded) {
            marks.flush(); // the SENT rides on a later call: written now
        }
        awaitMark("s1", "SENT|DELIVERED|");
        assertThat(run(message("s1", "43"))).isEqualTo(Step.DONE);
        assertThat(run(message("s1", "42"))).as("a redelivery of 42's message").isEqualTo(Step.DONE);

        assertThat(transport.sent).containsExactly("42/text s1");
        assertThat(results()).hasSize(3);
        assertReuseFailed(results().get(1), "s1", "43");
        assertThat(results().get(2)).satisfies(r -> { // as before: the result the previous owner could not write
            assertThat(r.getChatId()).isEqualTo("42");
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.getReason()).contains("already sent before a redelivery");
            assertThat(r.getProviderMessageId()).isEqualTo(1L);
        });
        assertThat(lookups).containsExactly("s1@42");
        assertThat(mark("s1")).startsWith("SENT|DELIVERED|1|").endsWith("|42");
    }

    @ParameterizedTest(name = "folded={0}")
    @ValueSource(booleans = {true, false})
    void anIdLeftInFlightForAnotherChatIsNotSentOverItsMark(boolean folded) {
        wire(folded, true);
        // a grant for chat 42 whose owner was killed before its call: the in-flight mark, as Admission asks for it
        long at = System.currentTimeMillis();
        grantInFlight("f1", "42", at);
        assertThat(mark("f1")).isEqualTo("FLIGHT|||" + at + "|42");

        assertThat(run(message("f1", "43"))).isEqualTo(Step.DONE);
        assertThat(transport.sent).isEmpty();
        assertReuseFailed(results().get(0), "f1", "43");
        assertThat(mark("f1")).as("42's mark untouched").isEqualTo("FLIGHT|||" + at + "|42");

        assertThat(run(message("f1", "42"))).as("42's redelivery: no result found, sent").isEqualTo(Step.DONE);
        assertThat(transport.sent).containsExactly("42/text f1");
        assertThat(lookups).containsExactly("f1@42");
        assertThat(results()).extracting(DeliveryResult::getStatus)
                .containsExactly(DeliveryStatus.FAILED, DeliveryStatus.DELIVERED);
    }

    /**
     * The race a review found: the mark is read with a message's first decision only, so a notification for chat 43
     * whose first decision came (refused: its chat waits) before chat 42's message with the same id was granted went on to
     * be granted over 42's in-flight mark and sent; a later redelivery of 42's message then ended FAILED "reused" after
     * its DELIVERED (two results for one message). The grant's in-flight write now refuses a mark of another chat.
     * Folded only: without folding nothing is written between the read and the send (see the class's docs).
     */
    @org.junit.jupiter.api.Test
    void anIdGrantedForAnotherChatAfterThisMessagesFirstDecisionIsNotSentOverItsMark() {
        wire(true, true);
        PendingMessage for43 = firstDecisionRefused("x1", "43");

        assertThat(run(message("x1", "42"))).isEqualTo(Step.DONE);
        awaitMark("x1", "DONE|");
        assertThat(runToEnd(for43)).isEqualTo(Step.DONE);
        assertThat(run(message("x1", "42"))).as("a redelivery of 42's message").isEqualTo(Step.DONE);

        assertThat(transport.sent).containsExactly("42/text x1");
        assertThat(results()).hasSize(2);
        assertThat(results().get(0).getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
        assertReuseFailed(results().get(1), "x1", "43");
        assertThat(alreadyFinished).containsExactly("x1@42");
        assertThat(mark("x1")).as("42's mark is kept").startsWith("DONE|").endsWith("|42");
    }

    /**
     * The same race for ONE chat (review R1): a copy of a message whose first decision was refused (its mark read then:
     * none) while another copy of it (a duplicate record in the outbox, or the copy a sender still held while a
     * rebalance gave its partition away) was granted, sent and acknowledged. The first copy's grant wrote its in-flight
     * mark over the DONE one and sent the message again. The grant now refuses a settled mark (SENT, DONE) of its own
     * chat too: one send, one result.
     */
    @org.junit.jupiter.api.Test
    void aCopyOfAMessageDecidedBeforeItsTwinWasSentIsNotSentAgain() {
        wire(true, true);
        PendingMessage first = firstDecisionRefused("d1", "42");

        assertThat(run(message("d1", "42"))).as("the twin, after the gate").isEqualTo(Step.DONE);
        awaitMark("d1", "DONE|");
        assertThat(runToEnd(first)).isEqualTo(Step.DONE);

        assertThat(transport.sent).as("sent once").containsExactly("42/text d1");
        assertThat(results()).singleElement().satisfies(r -> assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED));
        assertThat(alreadyFinished).containsExactly("d1@42");
        assertThat(mark("d1")).as("the DONE mark is kept").startsWith("DONE|").endsWith("|42");
    }

    @ParameterizedTest(name = "folded={0}")
    @ValueSource(booleans = {true, false})
    void aMessageTheTopologyReAddressedAfterAMigrationIsARedeliveryOfItsOldChat(boolean folded) {
        wire(folded, true);
        assertThat(run(message("m1", "-700"))).isEqualTo(Step.DONE);
        awaitMark("m1", "DONE|");
        OutboundMessage readdressed = OutboundMessage.newBuilder(message("m1", "-100700"))
                .setAttributes(Map.of("sluice.migrated_from_chat_id", "-700")).build();
        assertThat(run(readdressed)).isEqualTo(Step.DONE);
        assertThat(transport.sent).containsExactly("-700/text m1");
        assertThat(results()).hasSize(1);
        assertThat(alreadyFinished).containsExactly("m1@-100700");
    }

    /**
     * The re-addressed message meets its old chat's in-flight mark with no result on the topic (its owner was killed
     * before the call): it is sent once to the new chat, not refused as another chat's (the grant's in-flight write is
     * not exclusive for it) and not asked again and again.
     */
    @ParameterizedTest(name = "folded={0}")
    @ValueSource(booleans = {true, false})
    void aReAddressedMessageWhoseOldChatsGrantLeftNoResultIsSentOnce(boolean folded) {
        wire(folded, true);
        long at = System.currentTimeMillis();
        grantInFlight("g1", "-700", at);
        OutboundMessage readdressed = OutboundMessage.newBuilder(message("g1", "-100700"))
                .setAttributes(Map.of("sluice.migrated_from_chat_id", "-700")).build();
        assertThat(run(readdressed)).isEqualTo(Step.DONE);
        assertThat(transport.sent).containsExactly("-100700/text g1");
        assertThat(lookups).containsExactly("g1@-700");
        assertThat(results()).singleElement().satisfies(r -> assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED));
    }

    /**
     * Found from outside: `sluice replay --filter status=FAILED` re-creates the notification under its id, and the sender
     * took the earlier attempt's in-flight mark (a FAILED result keeps it) with that result on the topic for a crash
     * redelivery: nothing sent, no result, while the CLI said "written". A replay is a new attempt: marks written
     * before it ({@code sluice.replayed.at}) are an earlier attempt's. Its own marks still work: a redelivery of the
     * replayed message after its result gets no second one.
     */
    @ParameterizedTest(name = "folded={0}")
    @ValueSource(booleans = {true, false})
    void aReplayOfAFailedMessageIsSentAndGetsItsOwnResult(boolean folded) {
        wire(folded, true);
        resultsOnTopic = true;
        transport.script("42", new dev.sluice.sender.provider.SendOutcome.PermanentFailure(400, "Bad Request: odd"));
        assertThat(run(message("p1", "42"))).isEqualTo(Step.DONE);
        assertThat(results()).singleElement().satisfies(r -> assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED));
        OutboundMessage replayed = replayed("p1", "42");
        assertThat(run(replayed)).isEqualTo(Step.DONE);
        assertThat(transport.sent).containsExactly("42/text p1", "42/text p1");
        assertThat(results()).extracting(DeliveryResult::getStatus)
                .containsExactly(DeliveryStatus.FAILED, DeliveryStatus.DELIVERED);
        awaitMark("p1", "DONE|");
        assertThat(run(replayed)).as("a redelivery of the replayed message").isEqualTo(Step.DONE);
        assertThat(transport.sent).hasSize(2);
        assertThat(results()).hasSize(2);
    }

    /** A replay of a message an earlier attempt delivered: not sent again, and a result of its own saying so. */
    @ParameterizedTest(name = "folded={0}")
    @ValueSource(booleans = {true, false})
    void aReplayOfADeliveredMessageIsNotSentAgainAndGetsItsOwnResult(boolean folded) {
        wire(folded, true);
        resultsOnTopic = true;
        assertThat(run(message("q1", "42"))).isEqualTo(Step.DONE);
        awaitMark("q1", "DONE|");
        assertThat(run(replayed("q1", "42"))).isEqualTo(Step.DONE);
        assertThat(transport.sent).containsExactly("42/text q1");
        assertThat(results()).hasSize(2);
        assertThat(results().get(1)).satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.getReason()).isEqualTo("replay of q1: an earlier attempt was delivered (idempotency key); "
                    + "not sent again");
            assertThat(r.getProviderMessageId()).as("the DONE mark does not keep it").isNull();
        });
    }

    /** As `sluice replay` writes it: the same notification, attributes sluice.replayed.from and .at (now). */
    private OutboundMessage replayed(String id, String chat) {
        String mark = String.valueOf(mark(id));
        long markAt = MarkValuesAt.of(mark);
        await().atMost(Duration.ofSeconds(2)).until(() -> System.currentTimeMillis() > markAt);
        return OutboundMessage.newBuilder(message(id, chat)).setAttributes(Map.of(
                "sluice.replayed.from", "delivery.results:FAILED",
                "sluice.replayed.at", Long.toString(System.currentTimeMillis()))).build();
    }

    /** The time of a stored mark (0 when it has none, or there is no mark). */
    private static final class MarkValuesAt {
        static long of(String v) {
            return "null".equals(v) ? 0 : dev.sluice.sender.idempotency.MarkValues.parse(v).atMs();
        }
    }

    /**
     * A grant that writes the in-flight mark, by a sender whose marks ride on the budget's calls: this test's own budget
     * when folded; else another sender's (this one reads marks with a GET, as while the budget is in its outage fallback).
     */
    private void grantInFlight(String id, String chat, long at) {
        BudgetRequest request = BudgetRequest.live("bot", chat).markingInFlight(id, dev.sluice.sender.idempotency.MarkValues.inFlight(at, chat));
        if (folded) {
            assertThat(redisBudget.tryAcquire(request).granted()).isTrue();
            return;
        }
        SenderConfig config = Fakes.config("sender.sent.mark.ttl.ms", Long.toString(TTL_MS));
        try (RedisGcraBudget other = new RedisGcraBudget(redis.url(), config.budgetConfig(), Duration.ofSeconds(2));
             RedisSentMarks otherMarks = new RedisSentMarks(redis.url(), Duration.ofMillis(TTL_MS), Duration.ofSeconds(2))) {
            assertThat(SenderWiring.foldMarkWrites(config, other, otherMarks)).isTrue();
            assertThat(other.tryAcquire(request).granted()).isTrue();
        }
    }

    /**
     * Message {@code id} for {@code chat} after its first decision: refused, as its chat waits out a 429's gate of 400 ms
     * (what a 429 of that chat writes), its mark read then (none yet).
     */
    private PendingMessage firstDecisionRefused(String id, String chat) {
        redisBudget.penalizeChat("bot", chat, Duration.ofMillis(400));
        long offset = nextOffset++;
        offsets.received(tp, offset);
        PendingMessage p = new PendingMessage(tp, offset, message(id, chat));
        assertThat(processor.process(p)).as("chat " + chat + " waits; the mark was read: none yet")
                .isInstanceOf(Step.RetryAt.class);
        assertThat(p.sentMarkChecked()).isTrue();
        return p;
    }

    private void assertReuseFailed(DeliveryResult r, String id, String chat) {
        assertThat(r.getMessageId()).isEqualTo(id);
        assertThat(r.getChatId()).isEqualTo(chat);
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
        assertThat(r.getReason()).isEqualTo("id " + id + " was already used for another chat of bot bot within the sent "
                + "marks' TTL; ids are idempotency keys, unique per bot; not sent");
        assertThat(r.getProviderMessageId()).isNull();
        assertThat(r.getAttempts()).isZero();
    }

    private List<DeliveryResult> results() {
        return producer.history().stream().map(ProducerRecord::value).toList();
    }

    private static OutboundMessage message(String id, String chat) {
        return Fakes.message(id, chat, Instant.now().minusMillis(50), null);
    }

    /** Steps the message until its lane's head is done (bounded; a retry's own ready time is honoured). */
    private Step run(OutboundMessage m) {
        long offset = nextOffset++;
        offsets.received(tp, offset);
        return runToEnd(new PendingMessage(tp, offset, m));
    }

    private Step runToEnd(PendingMessage p) {
        Step step = null;
        for (int i = 0; i < 20; i++) {
            step = processor.process(p);
            if (!(step instanceof Step.RetryAt r)) {
                break;
            }
            long wait = r.readyAtMs() - System.currentTimeMillis();
            if (wait > 0) {
                try {
                    Thread.sleep(Math.min(wait, 2000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return step;
                }
            }
        }
        if (folded) {
            marks.flush(); // what the bot's next budget call would carry (the SENT is held for its DONE until then)
        }
        return step;
    }

    /** Until the mark is written (a DONE without folding is an asynchronous SET after the result's acknowledgement). */
    private void awaitMark(String id, String prefix) {
        await().atMost(Duration.ofSeconds(5)).until(() -> String.valueOf(mark(id)).startsWith(prefix));
    }

    private String mark(String id) {
        return direct.sync().get(BudgetKeys.sentMark("bot", id));
    }
}
