package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.sender.budget.BudgetLimits;
import org.junit.jupiter.api.Test;

class BotPacerTest {

    @Test
    void waiting_lanes_get_consecutive_slots_at_the_global_rate_instead_of_waking_together() {
        BotPacer pacer = new BotPacer(new BudgetLimits(10, 1, 1, 1));
        assertThat(pacer.reserve("bot", 1_000)).isEqualTo(1_000);
        assertThat(pacer.reserve("bot", 1_000)).isEqualTo(1_100);
        assertThat(pacer.reserve("bot", 1_000)).isEqualTo(1_200);
        assertThat(pacer.reserve("other", 1_000)).as("bots are paced independently").isEqualTo(1_000);
        assertThat(pacer.reserve("bot", 5_000)).as("idle time is not banked beyond the burst").isEqualTo(5_000);
        assertThat(pacer.reserve("bot", 5_000)).isEqualTo(5_100);
    }

    @Test
    void a_global_refusal_defers_the_next_slots_to_when_the_budget_admits_again() {
        BotPacer pacer = new BotPacer(new BudgetLimits(10, 2, 1, 1));
        assertThat(pacer.reserve("bot", 0)).isZero();
        assertThat(pacer.reserve("bot", 0)).as("burst 2").isZero();
        pacer.deferTo("bot", 700);
        assertThat(pacer.reserve("bot", 10)).isEqualTo(700);
        assertThat(pacer.reserve("bot", 10)).isEqualTo(800);
    }
}
