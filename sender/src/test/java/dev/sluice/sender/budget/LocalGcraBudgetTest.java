package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import dev.sluice.sender.ManualClock;
import org.junit.jupiter.api.Test;

/** The contract on the in-process budget, plus exact checks on a fake clock. */
class LocalGcraBudgetTest extends BudgetContract {

    @Override
    protected BudgetPort budget(BudgetConfig config) {
        return new LocalGcraBudget(config, java.time.Clock.systemUTC());
    }

    @Test
    void admits_exactly_burst_plus_rate_times_T_on_a_fake_clock() {
        ManualClock clock = new ManualClock();
        LocalGcraBudget b = new LocalGcraBudget(new BudgetLimits(10, 10, 1000, 1000), clock);
        int granted = 0;
        int chat = 0;
        // T = 10 s in 1 ms steps, trying 3 times per step
        for (int ms = 0; ms <= 10_000; ms++) {
            for (int k = 0; k < 3; k++) {
                if (b.tryAcquire("bot", "c" + chat++).granted()) {
                    granted++;
                }
            }
            clock.advance(Duration.ofMillis(1));
        }
        assertThat(granted).isEqualTo(10 + 10 * 10);
    }

    @Test
    void the_wait_is_rounded_up_and_waiting_it_exactly_passes_on_a_fake_clock() {
        ManualClock clock = new ManualClock();
        LocalGcraBudget b = new LocalGcraBudget(new BudgetLimits(3, 1, 1000, 1000), clock);
        assertThat(b.tryAcquire("bot", "a").granted()).isTrue();
        clock.advance(Duration.ofNanos(1_000)); // 1 us later
        Decision d = b.tryAcquire("bot", "b");
        // interval 1000/3 ms; 1 us later is the same ms, so 333.33 ms are left: rounded UP to 334
        assertThat(d.retryIn()).isEqualTo(Duration.ofMillis(334));
        clock.advance(Duration.ofMillis(333));
        assertThat(b.tryAcquire("bot", "b").granted()).isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(b.tryAcquire("bot", "b").granted()).isTrue();
    }
}
