package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * Issue 9: "live and backfill together for one bot: live lag p99 stays within 1 s of live alone". Live traffic
 * at half the bot's rate, once alone and once on top of a backfill backlog of 1,000 messages; the budget
 * reserves headroom for live ({@code budget.backfill.headroom}) and the sender paces backfill lanes apart
 * from live ones, so live never queues behind the backlog.
 */
@org.junit.jupiter.api.Tag("quiet") // real rates, little headroom: run alone (sender/pom.xml)
class LiveBackfillIT {
    private static final int RATE = 40;

    private record Run(long p99Ms, long p50Ms, int backfillDelivered) {
    }

    private static Run run(String prefix, String bot, String token, int backfill) throws Exception {
        SenderIt.topics(prefix, 2);
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(RATE + 10))) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(bot, token));
            s.put("budget.global.rate.per.s", Integer.toString(RATE));
            List<OutboundMessage> old = new ArrayList<>();
            for (int i = 0; i < backfill; i++) {
                old.add(SenderIt.message("b" + i, bot, Integer.toString(200_000 + i)).setLane(Lane.BACKFILL).build());
            }
            if (!old.isEmpty()) {
                SenderIt.produce(prefix + ".outbox.backfill", old);
            }
            int live = 150;
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results");
                 KafkaProducer<String, OutboundMessage> producer = SenderIt.producer()) {
                sender.start();
                // warm up: the sender owns the partitions and has sent once before the measured live traffic
                SenderIt.produce(prefix + ".outbox.live", List.of(SenderIt.message("warmup", bot, "299999").build()));
                results.awaitUntil(r -> r.byId.containsKey("warmup"), Duration.ofSeconds(30));
                if (backfill > 0) {
                    results.awaitUntil(r -> r.byId.size() >= 40, Duration.ofSeconds(30)); // backfill is flowing
                }
                // live at half the bot's rate, due when produced
                long intervalNanos = 1_000_000_000L / (RATE / 2);
                long next = System.nanoTime();
                for (int i = 0; i < live; i++) {
                    Instant now = Instant.now();
                    OutboundMessage m = SenderIt.message("l" + i, bot, Integer.toString(300_000 + i)).setDueAt(now)
                            .setCreatedAt(now).build();
                    producer.send(new ProducerRecord<>(prefix + ".outbox.live", m.getChatId(), m));
                    next += intervalNanos;
                    LockSupport.parkNanos(next - System.nanoTime());
                }
                producer.flush();
                results.awaitUntil(r -> r.byId.keySet().stream().filter(k -> k.startsWith("l")).count() >= live,
                        Duration.ofSeconds(40));
                List<Long> lags = results.byId.values().stream().filter(r -> r.getMessageId().startsWith("l"))
                        .peek(r -> assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED))
                        .map(r -> r.getSentAt().toEpochMilli() - r.getDueAt().toEpochMilli()).sorted().toList();
                int backfillDone = (int) results.byId.values().stream().filter(r -> r.getMessageId().startsWith("b"))
                        .count();
                return new Run(lags.get((int) Math.ceil(lags.size() * 0.99) - 1), lags.get(lags.size() / 2), backfillDone);
            }
        }
    }

    @Test
    void live_lag_p99_with_a_backfill_backlog_stays_within_one_second_of_live_alone() throws Exception {
        Run alone = run("lb-alone", "lbalone", dev.sluice.testkit.FakeTokens.of("760000001"), 0);
        Run together = run("lb-both", "lbboth", dev.sluice.testkit.FakeTokens.of("760000002"), 1_000);
        System.out.printf("live lag alone p50 %d ms p99 %d ms; with backfill p50 %d ms p99 %d ms "
                + "(%d backfill messages delivered meanwhile)%n", alone.p50Ms(), alone.p99Ms(), together.p50Ms(),
                together.p99Ms(), together.backfillDelivered());
        assertThat(together.p99Ms()).isLessThanOrEqualTo(alone.p99Ms() + 1_000);
        assertThat(together.backfillDelivered()).as("backfill used what live left").isGreaterThan(100);
    }
}
