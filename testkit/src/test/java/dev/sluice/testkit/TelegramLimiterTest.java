package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import dev.sluice.testkit.TelegramLimiter.Decision;
import dev.sluice.testkit.TelegramLimiter.Scope;
import org.junit.jupiter.api.Test;

class TelegramLimiterTest {

    private static final FakeTelegramLimits ONLY_GLOBAL_5 = new FakeTelegramLimits(5, 1_000_000.0, 1_000_000, 1_000_000);

    @Test
    void globalSlidingWindowRefusesTheSixthInOneSecondWithRetryAfterRoundedUp() {
        TelegramLimiter limiter = new TelegramLimiter(ONLY_GLOBAL_5);
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.tryAcquire("bot", String.valueOf(100 + i), i).accepted()).isTrue();
        }
        // oldest accepted at 0 leaves the window at 1000: wait 990 ms -> retry_after 1
        Decision refused = limiter.tryAcquire("bot", "200", 10);
        assertThat(refused).isEqualTo(new Decision(false, Scope.BOT, 1));
    }

    @Test
    void onlyRequestsCarryingAllowPaidBroadcastGoBeyondTheGlobalLimitUpTo1000PerSecond() {
        TelegramLimiter limiter = new TelegramLimiter(ONLY_GLOBAL_5);
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.tryAcquire("bot", String.valueOf(100 + i), i).accepted()).isTrue();
        }
        assertThat(limiter.tryAcquire("other", "1", 5, false).accepted()).as("another bot's window").isTrue();
        TelegramLimiter paid = new TelegramLimiter(ONLY_GLOBAL_5);
        for (int i = 0; i < TelegramLimiter.PAID_BROADCAST_PER_SECOND; i++) {
            assertThat(paid.tryAcquire("bot", String.valueOf(1000 + i), 0, true).accepted()).isTrue();
        }
        assertThat(paid.tryAcquire("bot", "x", 1, true).accepted()).as("the 1001st in one second").isFalse();
        TelegramLimiter mixed = new TelegramLimiter(ONLY_GLOBAL_5);
        for (int i = 0; i < 5; i++) {
            mixed.tryAcquire("bot", String.valueOf(100 + i), 0, false);
        }
        assertThat(mixed.tryAcquire("bot", "y", 1, false).accepted()).as("without the flag: refused").isFalse();
    }

    @Test
    void aCallDuringAPenaltyExtendsItAndRefusalsSpendNoBudget() {
        TelegramLimiter limiter = new TelegramLimiter(ONLY_GLOBAL_5);
        for (int i = 0; i < 5; i++) {
            limiter.tryAcquire("bot", "1" + i, 0);
        }
        assertThat(limiter.tryAcquire("bot", "x1", 100).accepted()).isFalse(); // penalty until 1100
        // at 1000 the window has room again, but the penalty (now extended to 1900) still holds
        assertThat(limiter.tryAcquire("bot", "x1", 900)).isEqualTo(new Decision(false, Scope.BOT, 1));
        assertThat(limiter.tryAcquire("bot", "x1", 1899).accepted()).isFalse(); // extended to 2899
        assertThat(limiter.tryAcquire("bot", "x1", 2898).accepted()).isFalse(); // extended to 3898
        assertThat(limiter.tryAcquire("bot", "x1", 3898).accepted()).isTrue();
        // the refused calls were not counted: 4 more fit in the same second
        for (int i = 0; i < 4; i++) {
            assertThat(limiter.tryAcquire("bot", "y" + i, 3899 + i).accepted()).isTrue();
        }
        assertThat(limiter.tryAcquire("bot", "z", 3950).accepted()).isFalse();
    }

    @Test
    void penaltiesAndWindowsArePerBot() {
        TelegramLimiter limiter = new TelegramLimiter(ONLY_GLOBAL_5);
        for (int i = 0; i < 6; i++) {
            limiter.tryAcquire("botA", "c" + i, 0);
        }
        assertThat(limiter.tryAcquire("botA", "c9", 1).accepted()).isFalse();
        assertThat(limiter.tryAcquire("botB", "c9", 1).accepted()).isTrue();
    }

    @Test
    void chatGcraAllowsTheBurstThenOnePerInterval() {
        TelegramLimiter limiter = new TelegramLimiter(new FakeTelegramLimits(1000, 1.0, 3, 1000));
        assertThat(limiter.tryAcquire("bot", "42", 0).accepted()).isTrue();
        assertThat(limiter.tryAcquire("bot", "42", 0).accepted()).isTrue();
        assertThat(limiter.tryAcquire("bot", "42", 0).accepted()).isTrue();
        // TAT = 3000; allowed from TAT - 2 * 1000 = 1000
        assertThat(limiter.tryAcquire("bot", "42", 0)).isEqualTo(new Decision(false, Scope.CHAT, 1));
        assertThat(limiter.tryAcquire("bot", "43", 0).accepted()).as("other chats unaffected").isTrue();
        assertThat(limiter.tryAcquire("bot", "42", 1000).accepted()).isTrue(); // penalty ended at 1000
        // TAT = 4000: next allowed at 2000 (wait 1000 ms -> 1 s)
        assertThat(limiter.tryAcquire("bot", "42", 1000)).isEqualTo(new Decision(false, Scope.CHAT, 1));
    }

    @Test
    void chatNeverGetsMoreThanBurstPlusRateTimesInterval() {
        TelegramLimiter limiter = new TelegramLimiter(new FakeTelegramLimits(1000, 1.0, 3, 1000));
        List<Long> acceptedAt = new ArrayList<>();
        long t = 0;
        while (t < 10_000) {
            Decision d = limiter.tryAcquire("bot", "7", t);
            if (d.accepted()) {
                acceptedAt.add(t);
                t += 1; // a greedy client retries right away
            } else {
                t += d.retryAfterSeconds() * 1000; // and honours retry_after
            }
        }
        assertThat(SlidingWindows.maxPerWindow(acceptedAt, 1000)).isLessThanOrEqualTo(3);
        assertThat(acceptedAt.size()).isLessThanOrEqualTo(3 + 10);
        assertThat(acceptedAt.size()).isGreaterThanOrEqualTo(10);
    }

    @Test
    void groupAllowsTwentyPerSlidingMinute() {
        TelegramLimiter limiter = new TelegramLimiter(new FakeTelegramLimits(1000, 1000.0, 1000, 20));
        for (int i = 0; i < 20; i++) {
            assertThat(limiter.tryAcquire("bot", "-100123", i * 100L).accepted()).isTrue();
        }
        // first accepted at 0 leaves the window at 60 000: from 2000 that is 58 s
        assertThat(limiter.tryAcquire("bot", "-100123", 2000)).isEqualTo(new Decision(false, Scope.GROUP, 58));
        assertThat(limiter.tryAcquire("bot", "555", 2000).accepted()).as("private chats have no group limit").isTrue();
        assertThat(limiter.tryAcquire("bot", "-100123", 60_000).accepted()).isTrue();
        assertThat(limiter.tryAcquire("bot", "-100123", 60_050).accepted()).as("second of the window still there").isFalse();
    }

    @Test
    void usernamesAreGroups() {
        assertThat(TelegramLimiter.isGroup("@sluice_news")).isTrue();
        assertThat(TelegramLimiter.isGroup("-42")).isTrue();
        assertThat(TelegramLimiter.isGroup("42")).isFalse();
    }

    @Test
    void forcedPenaltyForAChatOrTheWholeBot() {
        TelegramLimiter limiter = new TelegramLimiter(FakeTelegramLimits.telegram());
        assertThat(limiter.penalise("bot", "42", 3, 0)).isEqualTo(new Decision(false, Scope.CHAT, 3));
        assertThat(limiter.tryAcquire("bot", "43", 0).accepted()).isTrue();
        assertThat(limiter.tryAcquire("bot", "42", 2999)).isEqualTo(new Decision(false, Scope.CHAT, 3)); // -> 5999
        assertThat(limiter.tryAcquire("bot", "42", 5998).accepted()).isFalse();
        assertThat(limiter.tryAcquire("bot", "42", 8998).accepted()).isTrue();

        limiter.penalise("bot", null, 2, 10_000);
        assertThat(limiter.tryAcquire("bot", "44", 10_001)).isEqualTo(new Decision(false, Scope.BOT, 2));
        assertThat(limiter.tryAcquire("other", "44", 10_001).accepted()).isTrue();
    }

    @Test
    void slidingWindowMaximum() {
        assertThat(SlidingWindows.maxPerWindow(List.of(), 1000)).isZero();
        assertThat(SlidingWindows.maxPerWindow(List.of(0L, 999L), 1000)).isEqualTo(2);
        assertThat(SlidingWindows.maxPerWindow(List.of(0L, 1000L), 1000)).isEqualTo(1);
        assertThat(SlidingWindows.maxPerWindow(List.of(0L, 10L, 500L, 1005L, 1400L, 1450L), 1000)).isEqualTo(4);
        assertThat(SlidingWindows.maxPerWindow(List.of(1450L, 0L, 1005L, 10L, 1400L, 500L), 1000))
                .as("unsorted input").isEqualTo(4);
    }
}
