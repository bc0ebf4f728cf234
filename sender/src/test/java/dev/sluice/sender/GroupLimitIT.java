package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 9: "60 messages to one group: no 429 at all, and FakeTelegram never sees more than 20 in any 60 s".
 * Scaled ten times faster: FakeTelegram runs on a clock ten times faster than the wall clock (its 60 s window
 * is 6 s of real time, its 1/s chat limit 10/s), and the budget's limits are the Telegram ones times ten
 * (group 190/min: 19/min scaled, a little under 20 because the faster clock also multiplies network jitter by
 * ten). The budget alone must keep the group under the provider's limit: FakeTelegram answers 429 otherwise.
 */
class GroupLimitIT {
    private static final String BOT = "groups";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("750000001");
    private static final int SCALE = 10;

    /** Wall clock sped up: fake time = start + SCALE · (real − start). */
    static final class ScaledClock extends Clock {
        private final long start = System.currentTimeMillis();

        @Override
        public long millis() {
            return start + (System.currentTimeMillis() - start) * SCALE;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    @Test
    void sixty_messages_to_one_group_get_no_429_and_never_more_than_20_in_any_60_s() {
        String prefix = "group";
        SenderIt.topics(prefix, 1);
        try (FakeTelegram telegram = FakeTelegram.builder().limits(FakeTelegramLimits.telegram())
                .clock(new ScaledClock()).start()) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("budget.group.rate.per.min", Integer.toString(19 * SCALE));
            s.put("budget.group.burst", "1");
            s.put("budget.chat.rate.per.s", Integer.toString(SCALE));
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                msgs.add(SenderIt.message("g" + i, BOT, "-1009001").build());
            }
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);
                Map<String, DeliveryResult> byId = results.awaitResults(60, Duration.ofSeconds(60));
                List<FakeTelegramAccepted> accepted = telegram.acceptedFor("-1009001");
                long spanFakeMs = accepted.get(accepted.size() - 1).acceptedAtMillis() - accepted.get(0).acceptedAtMillis();
                int maxIn60s = telegram.maxGroupMessagesPer(Duration.ofSeconds(60));
                System.out.printf("group: 60 messages over %.1f fake minutes, max %d in any 60 s, %d 429s%n",
                        spanFakeMs / 60_000.0, maxIn60s, telegram.rejected429Count());
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(telegram.rejected429Count()).as("429s").isZero();
                assertThat(maxIn60s).isLessThanOrEqualTo(20);
                assertThat(accepted).extracting(FakeTelegramAccepted::text).isEqualTo(
                        msgs.stream().map(OutboundMessage::getText).toList()); // in order
                assertThat(spanFakeMs).as("the group limit shaped it").isGreaterThan(150_000);
            }
        }
    }
}
