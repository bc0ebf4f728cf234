package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link JitCpu.Settle}: many-bots' warm-up waits its minimum, then until the compiler threads' share of the CPU over the
 * last step is at most the bound, or its maximum. The CPU readings are fakes that follow the wall clock (1 s steps,
 * real sleeps: the test takes ~6 s).
 */
class JitSettleTest {

    /** A process using one core since the test started, {@code jitPerMille} of it in the compiler (wall clock). */
    private static final class Readings {
        final long startNanos = System.nanoTime();
        final long jitPerMille;

        Readings(long jitPerMille) {
            this.jitPerMille = jitPerMille;
        }

        Duration cpu() {
            return Duration.ofNanos(System.nanoTime() - startNanos);
        }

        Duration jit() {
            return Duration.ofNanos((System.nanoTime() - startNanos) * jitPerMille / 1000);
        }
    }

    @Test
    void aSettledCompilerEndsTheWarmUpAtItsMinimum() throws Exception {
        Readings r = new Readings(10); // 1 % of the CPU
        JitCpu.Settle.Warmed w = new JitCpu.Settle(2, 6, 0.05, 1).warm(r::cpu, r::jit);
        assertThat(w.seconds()).isEqualTo(2);
        assertThat(w.settled()).isTrue();
        assertThat(w.lastStepJitShare()).isLessThanOrEqualTo(0.05);
    }

    @Test
    void aBusyCompilerKeepsItGoingUntilTheMaximumAndSaysSo() throws Exception {
        Readings r = new Readings(300); // 30 %
        JitCpu.Settle.Warmed w = new JitCpu.Settle(1, 3, 0.05, 1).warm(r::cpu, r::jit);
        assertThat(w.seconds()).isEqualTo(3);
        assertThat(w.settled()).isFalse();
        assertThat(w.lastStepJitShare()).isGreaterThan(0.05);
        assertThat(w.describe()).contains("3 s warm-up").contains("not settled at --warmup-max-seconds");
    }

    @Test
    void theBoundsAreChecked() {
        assertThatThrownBy(() -> new JitCpu.Settle(10, 5, 0.05, 15)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--warmup-max-seconds");
        assertThatThrownBy(() -> new JitCpu.Settle(10, 30, -1, 15)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--settle-jit-share");
    }
}
