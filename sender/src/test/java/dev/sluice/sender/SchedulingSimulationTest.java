package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.ManualClock;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.LocalGcraBudget;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.testkit.FakeTelegramLimits;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scheduler, the processor and the in-process GCRA together on a fake clock, driven the way the
 * dispatcher drives them: jump to the earliest readyAt, hand out ready heads, apply each step. Each scenario runs
 * twice: by a plain loop over the scheduler, one head at a time, and by the real {@link Dispatcher} (per-bot batches,
 * {@link ParkedLanes}, settle) with its sending work queued and run on the test thread.
 */
class SchedulingSimulationTest {
    private final ManualClock clock = new ManualClock();
    private final Fakes.ScriptedTransport transport = new Fakes.ScriptedTransport();
    private final Fakes.RecordingSink sink = new Fakes.RecordingSink();
    private final LaneScheduler<PendingMessage> scheduler = new LaneScheduler<>();
    private final Lanes lanes = new Lanes(scheduler);
    private final ArrayDeque<Runnable> sending = new ArrayDeque<>();
    private BotSlots slots = new BotSlots(1000);
    private SenderConfig config;
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);
    private final long start = clock.millis();

    private final AtomicInteger budgetCalls = new AtomicInteger();

    private DeliveryProcessor processor(BudgetLimits limits) {
        return processor(limits, transport);
    }

    private DeliveryProcessor processor(BudgetLimits limits, Fakes.ScriptedTransport transport, String... more) {
        transport.clockMs = c -> clock.millis();
        LocalGcraBudget local = new LocalGcraBudget(limits, clock);
        BudgetPort counting = new BudgetPort() {
            @Override
            public Decision tryAcquire(BudgetRequest request) {
                budgetCalls.incrementAndGet();
                return local.tryAcquire(request);
            }

            @Override
            public void penalize(String botId, PenaltyScope scope, String chatId, Duration penalty) {
                local.penalize(botId, scope, chatId, penalty);
            }

            @Override
            public BudgetState state() {
                return local.state();
            }

            @Override
            public void close() {
            }
        };
        SenderConfig config = Fakes.config("budget.global.rate.per.s", Double.toString(limits.globalRatePerS()),
                "budget.global.burst", Integer.toString(limits.globalBurst()),
                "budget.chat.rate.per.s", Double.toString(limits.chatRatePerS()),
                "budget.chat.burst", Integer.toString(limits.chatBurst()),
                "sender.max.attempts", "5", "sender.retry.backoff.max.ms", "5000", "sender.retry.after.jitter.ms", "100",
                "sender.max.in.flight.per.bot", "1000", "budget.global.arrival.margin.ms", "0");
        if (more.length > 0) {
            List<String> keys = new ArrayList<>(List.of("budget.global.arrival.margin.ms", "0",
                    "budget.global.rate.per.s", Double.toString(limits.globalRatePerS()),
                    "budget.global.burst", Integer.toString(limits.globalBurst()),
                    "budget.chat.rate.per.s", Double.toString(limits.chatRatePerS()),
                    "budget.chat.burst", Integer.toString(limits.chatBurst()),
                    "sender.max.attempts", "5", "sender.retry.backoff.max.ms", "5000", "sender.retry.after.jitter.ms",
                    "100"));
            keys.addAll(List.of(more));
            config = Fakes.config(keys.toArray(String[]::new));
            slots = new BotSlots(config.maxInFlightPerBot());
        }
        this.config = config;
        return new DeliveryProcessor(config, counting, transport, sink,
                new dev.sluice.sender.idempotency.InMemorySentMarks(Duration.ofDays(1), clock),
                Fakes.metrics(new SimpleMeterRegistry()), clock, new SplittableRandom(1), slots,
                new ChatRegistry(1000));
    }

    private void add(String id, String chat) {
        PendingMessage p = new PendingMessage(tp, 0, Fakes.message(id, chat, clock.instant(), null));
        lanes.add(p, clock.millis());
    }

    /** Runs until every lane is empty, by the plain loop or by the real dispatcher. */
    private int run(DeliveryProcessor processor, boolean realDispatcher) {
        return realDispatcher ? runDispatcher(processor) : run(processor);
    }

    /**
     * The real dispatcher: one round at the clock's time, then the sending work it handed out (which settles lanes
     * and, when a bot slot is released, wakes parked lanes); time jumps only to the next readyAt or time limit.
     */
    private int runDispatcher(DeliveryProcessor processor) {
        Dispatcher dispatcher = new Dispatcher(lanes, processor, slots, sending::add, clock, config);
        slots.onRelease(dispatcher::slotReleased);
        int rounds = 0;
        while (lanes.buffered() > 0) {
            long next = dispatcher.dispatchDue(clock.millis());
            if (!sending.isEmpty()) {
                Runnable r;
                while ((r = sending.poll()) != null) {
                    r.run();
                }
                rounds++;
                continue;
            }
            assertThat(next).as("lanes wait for a time or a released slot; nothing is stuck").isNotEqualTo(Long.MAX_VALUE);
            if (next > clock.millis()) {
                clock.setMillis(next);
            }
        }
        assertThat(dispatcher.parkedLanes()).isZero();
        return rounds;
    }

    /** Runs until every lane is empty; returns how many steps ran. Never advances time except to a readyAt. */
    private int run(DeliveryProcessor processor) {
        int steps = 0;
        while (scheduler.buffered() > 0) {
            long next = scheduler.nextReadyAtMs();
            if (next > clock.millis()) {
                clock.setMillis(next);
            }
            LaneScheduler.Head<PendingMessage> h;
            while ((h = scheduler.pollReady(clock.millis())) != null) {
                steps++;
                Step step = processor.process(h.message());
                if (step instanceof Step.RetryAt r) {
                    assertThat(r.readyAtMs()).as("a reschedule is in the future").isGreaterThan(clock.millis());
                    scheduler.reschedule(h, r.readyAtMs());
                } else {
                    scheduler.complete(h, clock.millis());
                }
            }
        }
        return steps;
    }

    @ParameterizedTest(name = "real dispatcher: {0}")
    @ValueSource(booleans = {false, true})
    void a_chat_under_a_429_penalty_waits_alone_while_other_chats_flow_at_the_global_rate(boolean realDispatcher) {
        DeliveryProcessor processor = processor(new BudgetLimits(30, 1, 1, 3));
        transport.script("X", new SendOutcome.RetryAfter(Duration.ofSeconds(3), SendOutcome.PenaltyScope.CHAT, "429"));
        add("X1", "X");
        add("X2", "X");
        for (int i = 0; i < 60; i++) {
            add("m" + i, "c" + i);
        }
        run(processor, realDispatcher);

        Map<String, Long> deliveredAt = new HashMap<>();
        for (int i = 0; i < transport.sent.size(); i++) {
            deliveredAt.put(transport.sent.get(i), transport.sentAt.get(i) - start);
        }
        assertThat(sink.results).hasSize(62).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
        // X's first call was answered 429 at t=0; its retry comes no earlier than 3 s later
        assertThat(transport.sent.get(0)).isEqualTo("X/text X1");
        assertThat(transport.sentAt.get(transport.sent.lastIndexOf("X/text X1")) - start).isGreaterThanOrEqualTo(3000);
        // meanwhile the 60 other chats were served at ~30/s: all done within ~2 s, not held behind X
        assertThat(deliveredAt.get("c59/text m59")).isLessThan(2100);
        // X's order is kept
        List<String> xOrder = new ArrayList<>();
        for (DeliveryResult r : sink.results) {
            if (r.getChatId().equals("X")) {
                xOrder.add(r.getMessageId());
            }
        }
        assertThat(xOrder).containsExactly("X1", "X2");
    }

    @ParameterizedTest(name = "real dispatcher: {0}")
    @ValueSource(booleans = {false, true})
    void budget_refusals_reschedule_lanes_so_the_global_limit_holds_in_every_second_with_few_budget_calls(
            boolean realDispatcher) {
        DeliveryProcessor processor = processor(new BudgetLimits(10, 1, 1, 2));
        for (int i = 0; i < 50; i++) {
            add("m" + i, "c" + (i % 25)); // 25 chats, 2 messages each: the global limit binds
        }
        run(processor, realDispatcher);
        assertThat(sink.results).hasSize(50);
        // per chat FIFO
        Map<String, Integer> lastSeen = new HashMap<>();
        for (DeliveryResult r : sink.results) {
            int n = Integer.parseInt(r.getMessageId().substring(1));
            Integer prev = lastSeen.put(r.getChatId(), n);
            assertThat(prev == null || prev < n).as("order in chat %s", r.getChatId()).isTrue();
        }
        // no sliding 1-second window has more than burst + rate = 11 calls (10/s, burst 1)
        List<Long> times = transport.sentAt;
        for (int i = 0; i < times.size(); i++) {
            int inWindow = 0;
            for (long t : times) {
                if (t >= times.get(i) && t < times.get(i) + 1000) {
                    inWindow++;
                }
            }
            assertThat(inWindow).isLessThanOrEqualTo(11);
        }
        // 50 messages at 10/s take ~5 s; lanes waiting on the bot's global limit do not each ask the budget
        assertThat(clock.millis() - start).isBetween(4800L, 5200L);
        assertThat(budgetCalls.get()).as("budget calls for 50 sends").isLessThanOrEqualTo(55);
    }

    /**
     * The demo stall: a bot-wide penalty (FakeTelegram's limiter, which extends a penalty on every call made
     * during it) while 300 chats wait. The second chat refused makes it a bot-wide gate: no chat calls the
     * bot until it lifts, so the penalty is not extended, the bot recovers after retry_after plus the jitter
     * and the pacer, and only two 429s are ever answered.
     */
    @ParameterizedTest(name = "real dispatcher: {0}")
    @ValueSource(booleans = {false, true})
    void a_bot_wide_penalty_is_waited_out_by_every_chat_so_the_bot_recovers_after_retry_after(boolean realDispatcher) {
        dev.sluice.testkit.TelegramLimiter telegram = new dev.sluice.testkit.TelegramLimiter(
                dev.sluice.testkit.FakeTelegramLimits.telegram());
        AtomicInteger rejected = new AtomicInteger();
        Fakes.ScriptedTransport limited = new Fakes.ScriptedTransport() {
            @Override
            public SendOutcome send(String botId, String chatId, String text, String parseMode) {
                sent.add(chatId + "/" + text);
                sentAt.add(clock.millis());
                var d = telegram.tryAcquire(botId, chatId, clock.millis());
                if (d.accepted()) {
                    return new SendOutcome.Delivered(nextId++);
                }
                rejected.incrementAndGet();
                return new SendOutcome.RetryAfter(Duration.ofSeconds(d.retryAfterSeconds()),
                        SendOutcome.PenaltyScope.CHAT, "Too Many Requests: retry after " + d.retryAfterSeconds());
            }
        };
        DeliveryProcessor processor = processor(new BudgetLimits(30, 1, 1, 3), limited);
        telegram.penalise("bot", null, 10, clock.millis()); // bot-wide: retry after 10 s
        for (int i = 0; i < 300; i++) {
            add("m" + i, Integer.toString(1000 + i));
        }
        run(processor, realDispatcher);

        assertThat(sink.results).hasSize(300).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
        assertThat(rejected.get()).as("429s: the first chat, then the second makes it bot-wide").isEqualTo(2);
        long firstDelivered = Long.MAX_VALUE;
        for (DeliveryResult r : sink.results) {
            firstDelivered = Math.min(firstDelivered, r.getSentAt().toEpochMilli());
        }
        // the second 429 (~33 ms in) extended the penalty to ~10.03 s; recovery follows within the jitter + a slot
        assertThat(firstDelivered - start).isBetween(10_000L, 10_300L);
        // then the 300 chats drain at the bot's rate: 10 s at 30/s, a little more because the bot-wide penalty
        // halved the rate (AIMD) and it climbs back additively
        assertThat(clock.millis() - start).isBetween(19_500L, 25_000L);
    }

    /**
     * Two in-flight slots for the bot: the real dispatcher hands out batches of 16, the processor grants two calls
     * and the other lanes park on the bot; every call that ends wakes one parked lane at once, so 40 chats drain
     * without time passing (a generous budget) and without any lane waiting for a timer.
     */
    @Test
    void lanes_parked_on_a_full_bot_are_woken_by_released_slots_without_waiting_for_time() {
        DeliveryProcessor processor = processor(new BudgetLimits(1000, 1000, 1000, 1000), transport,
                "sender.max.in.flight.per.bot", "2");
        for (int i = 0; i < 40; i++) {
            add("m" + i, "c" + (i % 20)); // 20 chats, 2 messages each
        }
        run(processor, true);

        assertThat(sink.results).hasSize(40).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
        assertThat(clock.millis()).as("no lane waited for a timer").isEqualTo(start);
        assertThat(slots.hasRoom("bot")).isTrue();
        Map<String, Integer> lastSeen = new HashMap<>();
        for (DeliveryResult r : sink.results) {
            int n = Integer.parseInt(r.getMessageId().substring(1));
            Integer prev = lastSeen.put(r.getChatId(), n);
            assertThat(prev == null || prev < n).as("order in chat %s", r.getChatId()).isTrue();
        }
    }
}
