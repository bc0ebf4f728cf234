package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.LettuceResources;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.sender.idempotency.RedisSentMarks;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Issue 6: Lettuce's command latencies of the budget's and the sent marks' Redis clients reach the registry. */
class RedisClientMetricsIT {

    @Test
    void a_decision_and_a_sent_mark_read_show_up_as_lettuce_command_timers_tagged_by_client() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String url = SenderIt.redis().url();
        try (RedisGcraBudget budget = new RedisGcraBudget(url, BudgetConfig.of(new BudgetLimits(10, 1, 1, 1)),
                Duration.ofSeconds(2), registry);
             RedisSentMarks marks = new RedisSentMarks(url, Duration.ofMinutes(1), Duration.ofSeconds(2), registry)) {
            assertThat(budget.tryAcquire("metrics", "1").granted()).isTrue();
            marks.get("metrics", "m-1");
            Timer evalsha = registry.find(LettuceResources.COMMAND_COMPLETION).tag("client", "budget")
                    .tag("command", "EVALSHA").timer();
            assertThat(evalsha).isNotNull();
            assertThat(evalsha.count()).as("one decision; a first NOSCRIPT answer counts too").isBetween(1L, 2L);
            Timer get = registry.find(LettuceResources.COMMAND_COMPLETION).tag("client", "sent_marks")
                    .tag("command", "GET").timer();
            assertThat(get).isNotNull();
            assertThat(get.count()).isEqualTo(1);
            assertThat(registry.find(LettuceResources.COMMAND_FIRST_RESPONSE).tag("client", "budget").timer()).isNotNull();
        }
    }
}
