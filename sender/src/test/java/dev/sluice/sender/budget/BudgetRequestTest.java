package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Issue 16 (F12): a chat id is normalised before it keys a budget, so one chat has one budget. */
class BudgetRequestTest {

    @Test
    void chat_ids_are_trimmed_and_usernames_lower_cased_before_they_key_a_budget() {
        assertThat(BudgetRequest.live("alerts", " -1001234 ").chatId()).isEqualTo("-1001234");
        assertThat(BudgetRequest.live("alerts", " -1001234").isGroup()).as("a group even with a leading space").isTrue();
        assertThat(BudgetRequest.live("alerts", "@MyGroup").chatId()).isEqualTo("@mygroup");
        assertThat(BudgetRequest.live("alerts", "42").isGroup()).isFalse();
        assertThat(BudgetKeys.chat("alerts", "@MyGroup")).isEqualTo(BudgetKeys.chat("alerts", "@mygroup"));
        assertThat(BudgetKeys.groupGate("alerts", " -1001234")).isEqualTo(BudgetKeys.groupGate("alerts", "-1001234"));
    }
}
