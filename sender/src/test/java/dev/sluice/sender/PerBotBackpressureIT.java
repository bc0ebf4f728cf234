package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.budget.client.BudgetClient;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 / finding F5 (last part): bot A is under a 10-minute bot-wide penalty (written to the shared budget
 * as another replica's 429 would be) with a backlog of 4 times {@code sender.buffer.max.records} on the same
 * partitions as bot B. B's messages, produced one by one while A waits, keep their usual latency; the records
 * buffered never exceed the bound, and A's backlog is still all there (no result, nothing sent) afterwards.
 */
class PerBotBackpressureIT {
    private static final String BOT_A = "held";
    private static final String TOKEN_A = dev.sluice.testkit.FakeTokens.of("750000001");
    private static final String BOT_B = "free";
    private static final String TOKEN_B = dev.sluice.testkit.FakeTokens.of("750000002");

    @Test
    void a_bot_held_by_a_long_penalty_with_a_large_backlog_never_holds_back_another_bot() throws Exception {
        String prefix = "perbot";
        SenderIt.topics(prefix, 3);
        int bound = 100;
        int backlogA = 4 * bound;
        int countB = 20;
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(200))) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(),
                    Map.of(BOT_A, TOKEN_A, BOT_B, TOKEN_B));
            s.put("budget.global.rate.per.s", "100");
            s.put("sender.buffer.max.records", Integer.toString(bound));
            try (BudgetClient budget = BudgetClient.fromSettings(Settings.of(s))) {
                // written to Redis (a first call may time out while the client connects: then written again)
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
                    budget.penalize(BOT_A, PenaltyScope.BOT, null, Duration.ofMinutes(10));
                    return budget.state() == dev.sluice.metrics.BudgetState.SHARED
                            && budget.tryAcquire(BOT_A).limit() == dev.sluice.sender.budget.Limit.GATE_BOT;
                });
            }
            List<OutboundMessage> held = new ArrayList<>();
            for (int i = 0; i < backlogA; i++) {
                held.add(SenderIt.message("a" + i, BOT_A, Integer.toString(70_000 + i)).build());
            }
            SenderIt.produce(prefix + ".outbox.live", held);
            AtomicInteger maxBuffered = new AtomicInteger();
            AtomicBoolean sampling = new AtomicBoolean(true);
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results");
                 KafkaProducer<String, OutboundMessage> producer = SenderIt.producer()) {
                Thread sampler = new Thread(() -> {
                    while (sampling.get()) {
                        maxBuffered.accumulateAndGet(sender.bufferedRecords(), Math::max);
                        LockSupport.parkNanos(200_000);
                    }
                });
                sampler.setDaemon(true);
                sampler.start();
                sender.start();
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                        .until(() -> sender.backlog(BOT_A) > 0);
                // B's messages arrive one by one behind A's backlog, on the same partitions (chats spread over them);
                // the first one warms the clients up (producer metadata, B's first budget call) and is not measured
                List<Long> latenciesMs = new ArrayList<>();
                for (int i = -1; i < countB; i++) {
                    OutboundMessage m = SenderIt.message("b" + i, BOT_B, Integer.toString(80_000 + i)).build();
                    long sentAt = System.currentTimeMillis();
                    producer.send(new ProducerRecord<>(prefix + ".outbox.live", m.getChatId(), m)).get();
                    String id = m.getId();
                    results.awaitUntil(r -> r.byId.containsKey(id), Duration.ofSeconds(20));
                    if (i >= 0) {
                        latenciesMs.add(System.currentTimeMillis() - sentAt);
                    }
                }
                sampling.set(false);
                sampler.join();
                System.out.printf("per-bot backpressure: B latencies %s ms; max buffered %d of %d; A backlog %d, "
                        + "deferred %d; results of A %s%n", latenciesMs, maxBuffered.get(), bound, sender.backlog(BOT_A),
                        Meters.sum(sender, "sluice.sender.backlog.deferred"), results.all.stream()
                                .filter(r -> r.getBotId().equals(BOT_A)).map(r -> r.getStatus() + " " + r.getReason()).toList());
                latenciesMs.sort(null);
                // usual: one poll, one budget call, one provider call, one result (about 60 ms here)
                assertThat(latenciesMs.get(countB / 2)).as("B's median, produce to result").isLessThan(300);
                assertThat(latenciesMs.get(countB - 1)).as("B's slowest message, produce to result").isLessThan(1_000);
                assertThat(maxBuffered.get()).as("records buffered").isLessThanOrEqualTo(bound);
                List<DeliveryResult> forB = results.all.stream().filter(r -> r.getBotId().equals(BOT_B)).toList();
                assertThat(forB).hasSize(countB + 1).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(results.all.stream().filter(r -> r.getBotId().equals(BOT_A))).as("A is held").isEmpty();
                assertThat(telegram.accepted()).hasSize(countB + 1);
                assertThat(sender.backlog(BOT_A)).as("A's share of the buffer").isPositive()
                        .isLessThanOrEqualTo(bound - 2 * (bound / 4));
            }
        }
    }

    private static final String BOT_C = "briefly";
    private static final String TOKEN_C = dev.sluice.testkit.FakeTokens.of("750000003");

    @Test
    void a_deferred_backlog_is_read_again_after_the_penalty_in_per_chat_order_once_each_and_the_lag_returns_to_0()
            throws Exception {
        String prefix = "perbot2";
        SenderIt.topics(prefix, 3);
        int bound = 100;
        int chats = 100;
        int perChat = 4;
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(200))) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(),
                    Map.of(BOT_C, TOKEN_C, BOT_B, TOKEN_B));
            s.put("budget.global.rate.per.s", "100");
            s.put("sender.buffer.max.records", Integer.toString(bound));
            long penaltyEndsAt;
            try (BudgetClient budget = BudgetClient.fromSettings(Settings.of(s))) {
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
                    budget.penalize(BOT_C, PenaltyScope.BOT, null, Duration.ofSeconds(15));
                    return budget.state() == dev.sluice.metrics.BudgetState.SHARED
                            && budget.tryAcquire(BOT_C).limit() == dev.sluice.sender.budget.Limit.GATE_BOT;
                });
                penaltyEndsAt = System.currentTimeMillis() + 15_000;
            }
            List<OutboundMessage> held = new ArrayList<>();
            for (int k = 0; k < perChat; k++) {
                for (int c = 0; c < chats; c++) {
                    held.add(SenderIt.message("c" + c + "-" + k, BOT_C, Integer.toString(85_000 + c)).build());
                }
            }
            SenderIt.produce(prefix + ".outbox.live", held);
            AtomicInteger maxBuffered = new AtomicInteger();
            AtomicBoolean sampling = new AtomicBoolean(true);
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                Thread sampler = new Thread(() -> {
                    while (sampling.get()) {
                        maxBuffered.accumulateAndGet(sender.bufferedRecords(), Math::max);
                        LockSupport.parkNanos(200_000);
                    }
                });
                sampler.setDaemon(true);
                sampler.start();
                sender.start();
                Map<String, DeliveryResult> byId = results.awaitResults(chats * perChat, Duration.ofSeconds(90));
                sampling.set(false);
                sampler.join();
                long deferred = Meters.sum(sender, "sluice.sender.backlog.deferred");
                System.out.printf("deferred backlog: %d messages, %d deferred, max buffered %d of %d, last result %d ms "
                        + "after the penalty%n", byId.size(), deferred, maxBuffered.get(), bound,
                        System.currentTimeMillis() - penaltyEndsAt);
                assertThat(deferred).as("records deferred at the bot's bound").isPositive();
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(results.all).as("one result each").hasSize(chats * perChat);
                assertThat(maxBuffered.get()).as("records buffered").isLessThanOrEqualTo(bound);
                assertThat(telegram.accepted()).as("accepted once each").hasSize(chats * perChat);
                assertThat(telegram.accepted()).allMatch(a -> a.acceptedAtMillis() >= penaltyEndsAt - 50);
                Map<String, List<String>> textsByChat = new java.util.LinkedHashMap<>();
                telegram.accepted().forEach(a -> textsByChat.computeIfAbsent(a.chatId(), c -> new ArrayList<>()).add(a.text()));
                textsByChat.forEach((chat, texts) -> {
                    String c = Integer.toString(Integer.parseInt(chat) - 85_000);
                    assertThat(texts).as("order of chat %s", chat)
                            .containsExactly("msg c" + c + "-0", "msg c" + c + "-1", "msg c" + c + "-2", "msg c" + c + "-3");
                });
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                        .until(() -> Lag.of(SenderIt.kafka(), prefix + "-group", prefix + ".outbox.live") == 0);
            }
        }
    }
}
