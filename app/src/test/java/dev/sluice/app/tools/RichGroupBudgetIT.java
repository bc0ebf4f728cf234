package dev.sluice.app.tools;

import static dev.sluice.app.tools.RichStack.line;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20 "one per-chat budget across methods", through a running pipeline in real time: 25 mixed calls (15 sends, 5
 * edits, 5 deletes) produced at once to one supergroup reach FakeTelegram (Telegram's published limits: 20 per group in
 * any 60 s, answered 429 beyond) with at most 20 in any 60 s, no 429, and in the order produced. 25 is the fewest rounds
 * of five that cross the limit (a sender without the group budget sends all 25 within seconds); it takes about 75 s of
 * real time (25 calls at 20 per minute); every wait is bounded.
 */
class RichGroupBudgetIT {
    private static final String GROUP = "-1009020";
    private static final int ROUNDS = 5;

    @Test
    void twentyFiveMixedCallsToOneGroupStayWithinTwentyPerMinuteInOrder(@TempDir Path dir) throws Exception {
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram());
             RichStack stack = new RichStack(dir, telegram, Map.of())) {
            List<String> lines = new ArrayList<>();
            List<String> expectedMethods = new ArrayList<>();
            List<String> expectedTexts = new ArrayList<>();
            List<String> ids = new ArrayList<>();
            for (int k = 0; k < ROUNDS; k++) {
                lines.add(line("a-" + k, GROUP, "a " + k, ""));
                lines.add(line("b-" + k, GROUP, "b " + k, ""));
                lines.add(line("ae-" + k, GROUP, "a " + k + " edited", "\"edit_of\":\"a-" + k + "\""));
                lines.add(line("c-" + k, GROUP, "c " + k, ""));
                lines.add(line("bd-" + k, GROUP, null, "\"delete_of\":\"b-" + k + "\""));
                ids.addAll(List.of("a-" + k, "b-" + k, "ae-" + k, "c-" + k, "bd-" + k));
                expectedMethods.addAll(List.of("sendMessage", "sendMessage", "editMessageText", "sendMessage", "deleteMessage"));
                expectedTexts.addAll(List.of("a " + k, "b " + k, "a " + k + " edited", "c " + k, ""));
            }
            long start = System.currentTimeMillis();
            stack.produce(lines);
            Map<String, DeliveryResult> r = stack.awaitResults(Duration.ofSeconds(300), ids.toArray(String[]::new));
            long tookMs = System.currentTimeMillis() - start;

            for (String id : ids) {
                assertThat(r.get(id).getStatus()).as(id + ": " + r.get(id).getReason()).isEqualTo(DeliveryStatus.DELIVERED);
            }
            List<FakeTelegramAccepted> accepted = telegram.acceptedFor(GROUP);
            int maxIn60s = telegram.maxGroupMessagesPer(Duration.ofSeconds(60));
            System.out.printf("%d mixed calls to group %s: %d ms, max %d in any 60 s, %d x 429, %d requests%n", 5 * ROUNDS, GROUP, tookMs,
                    maxIn60s, telegram.rejected429Count(), telegram.callsFor(GROUP).size());
            assertThat(accepted).extracting(FakeTelegramAccepted::method).as("order kept").containsExactlyElementsOf(expectedMethods);
            assertThat(accepted).extracting(FakeTelegramAccepted::text).as("order kept").containsExactlyElementsOf(expectedTexts);
            for (int k = 0; k < ROUNDS; k++) {
                assertThat(accepted.get(5 * k + 2).messageId()).as("edit acts on a-" + k)
                        .isEqualTo(r.get("a-" + k).getProviderMessageId());
                assertThat(accepted.get(5 * k + 4).messageId()).as("delete acts on b-" + k)
                        .isEqualTo(r.get("b-" + k).getProviderMessageId());
            }
            assertThat(maxIn60s).isLessThanOrEqualTo(20);
            assertThat(telegram.rejected429Count()).isZero();
            assertThat(telegram.callsFor(GROUP)).as("no call beyond the " + 5 * ROUNDS).hasSize(5 * ROUNDS);
            assertThat(stack.duplicateResults()).as("one result per id").isZero();
        }
    }
}
