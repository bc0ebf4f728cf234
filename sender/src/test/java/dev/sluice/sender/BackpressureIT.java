package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Issue 9: "100,000 messages queued for one slow bot: the sender's buffered records never exceed the bound,
 * the partitions were paused and resumed, nothing lost". Scaled to 4,000 messages with a bound of 200: the
 * bound is enforced per poll (pause at high-water = bound − max.poll.records, resume at half of it),
 * independent of how large the backlog behind it is, so a backlog 20 times the bound makes the consumer
 * cycle through pause/resume many times, which is what 100,000 against 10,000 would show, in seconds.
 */
class BackpressureIT {
    private static final String BOT = "slow";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("740000001");

    @Test
    void a_backlog_twenty_times_the_buffer_stays_bounded_pauses_and_resumes_and_loses_nothing() throws Exception {
        String prefix = "backlog";
        SenderIt.topics(prefix, 4);
        int count = 4_000;
        int bound = 200;
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(2_000))) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("budget.global.rate.per.s", "2000");
            s.put("sender.buffer.max.records", Integer.toString(bound));
            s.put("sender.status.interval.ms", "500");
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                msgs.add(SenderIt.message("q" + i, BOT, Integer.toString(100_000 + i)).build());
            }
            SenderIt.produce(prefix + ".outbox.live", msgs); // the whole backlog is waiting before the sender starts
            AtomicInteger maxBuffered = new AtomicInteger();
            AtomicBoolean sampling = new AtomicBoolean(true);
            long start = System.currentTimeMillis();
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
                Map<String, DeliveryResult> byId = results.awaitResults(count, Duration.ofSeconds(120));
                sampling.set(false);
                sampler.join();
                long pauses = Meters.pauses(sender);
                System.out.printf("backlog: %d messages through a buffer of %d in %d ms; max buffered %d, "
                        + "paused %d times%n", count, bound, System.currentTimeMillis() - start, maxBuffered.get(), pauses);
                assertThat(results.all).as("one result each, nothing lost").hasSize(count);
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(telegram.accepted()).hasSize(count);
                assertThat(maxBuffered.get()).as("buffered records").isLessThanOrEqualTo(bound)
                        .isGreaterThanOrEqualTo(bound / 2);
                // each pause was followed by a resume (or nothing more could have been consumed)
                assertThat(pauses).as("pause/resume cycles").isGreaterThanOrEqualTo(5);
            }
            // sender.status: while the backlog drained the instance reported it for its bot, and withdrew on close
            Map<String, List<dev.sluice.avro.SenderStatus>> reports = SenderIt.statusReports(prefix + ".sender.status");
            List<dev.sluice.avro.SenderStatus> mine = reports.get(BOT + "/" + prefix + "-group-1");
            assertThat(mine).as("reports of %s", reports.keySet()).isNotNull().hasSizeGreaterThan(2);
            assertThat(mine.stream().filter(java.util.Objects::nonNull))
                    .anySatisfy(r -> {
                        assertThat(r.getBacklog()).isPositive();
                        assertThat(r.getDrainRatePerS()).isPositive();
                    })
                    .allSatisfy(r -> assertThat(r.getBotId()).isEqualTo(BOT));
            assertThat(mine.get(mine.size() - 1)).as("a tombstone when the instance left").isNull();
        }
    }
}
