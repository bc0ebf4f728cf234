package dev.sluice.limits;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class AlgorithmsTest {

    private static final long HOUR = 3_600_000L;

    @Test
    void gcraAdmitsTheBurstThenOnePerEmissionInterval() {
        Gcra gcra = new Gcra(Rate.perHour(5), 5);
        long t0 = Instant.parse("2025-07-29T23:24:52.483Z").toEpochMilli();
        for (int i = 0; i < 5; i++) {
            assertThat(gcra.tryAcquire(t0).allowed()).isTrue();
        }
        Decision sixth = gcra.tryAcquire(t0);
        assertThat(sixth.allowed()).isFalse();
        assertThat(sixth.waitMillis()).isEqualTo(HOUR / 5);
        assertThat(gcra.tryAcquire(t0 + HOUR / 5 - 1).waitMillis()).isEqualTo(1);
        assertThat(gcra.tryAcquire(t0 + HOUR / 5).allowed()).isTrue();
    }

    @Test
    void gcraWaitIsRoundedUpWhenTheIntervalIsNotWholeMilliseconds() {
        // 30/s: I = 33.33 ms. After one admission at 0 the next may pass at 33.33 ms, i.e. at 34 ms.
        Gcra gcra = new Gcra(Rate.perSecond(30), 1);
        assertThat(gcra.tryAcquire(0).allowed()).isTrue();
        assertThat(gcra.tryAcquire(33)).isEqualTo(Decision.refuse(1));
        assertThat(gcra.tryAcquire(34).allowed()).isTrue();
        // Exactly 30 pass in [0, 1000): no drift from a rounded interval.
        Gcra fresh = new Gcra(Rate.perSecond(30), 1);
        int admitted = 0;
        for (long t = 0; t < 1000; t++) {
            if (fresh.tryAcquire(t).allowed()) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(30);
    }

    @Test
    void gcraReadsAnInjectedClock() {
        Gcra gcra = new Gcra(Rate.perSecond(1), 1);
        Clock clock = Clock.fixed(Instant.ofEpochMilli(10_000), ZoneOffset.UTC);
        assertThat(gcra.tryAcquire(clock).allowed()).isTrue();
        assertThat(gcra.tryAcquire(clock)).isEqualTo(Decision.refuse(1_000));
        assertThat(gcra.tryAcquire(Clock.offset(clock, java.time.Duration.ofSeconds(1))).allowed()).isTrue();
    }

    @Test
    void gcraPolicyKeepsOneLongAndGivesTheTimeToLive() {
        GcraPolicy policy = new GcraPolicy(Rate.perHour(5), 5);
        long tat = GcraPolicy.EMPTY_TAT;
        for (int i = 0; i < 5; i++) {
            GcraPolicy.Result r = policy.decide(tat, 0);
            assertThat(r.decision().allowed()).isTrue();
            tat = r.tat();
        }
        assertThat(policy.decide(tat, 0).tat()).isEqualTo(tat);
        assertThat(policy.millisUntilIdle(tat, 0)).isEqualTo(HOUR);
        assertThat(policy.millisUntilIdle(tat, HOUR)).isZero();
    }

    @Test
    void fixedWindowLetsTwiceTheLimitThroughAcrossABoundary() {
        FixedWindow fw = new FixedWindow(Rate.perHour(5));
        int admitted = 0;
        for (int i = 0; i < 5; i++) {
            admitted += fw.tryAcquire(HOUR - 1).allowed() ? 1 : 0;
        }
        assertThat(fw.tryAcquire(HOUR - 1)).isEqualTo(Decision.refuse(1));
        for (int i = 0; i < 5; i++) {
            admitted += fw.tryAcquire(HOUR).allowed() ? 1 : 0;
        }
        assertThat(admitted).isEqualTo(10); // 2N within 1 ms
    }

    @Test
    void slidingLogIsExactAcrossTheBoundary() {
        SlidingLog log = new SlidingLog(Rate.perHour(5));
        for (int i = 0; i < 5; i++) {
            assertThat(log.tryAcquire(HOUR - 1).allowed()).isTrue();
        }
        assertThat(log.tryAcquire(HOUR)).isEqualTo(Decision.refuse(2 * HOUR - 1 - HOUR));
        assertThat(log.tryAcquire(2 * HOUR - 1).allowed()).isTrue();
    }

    @Test
    void slidingWindowCounterWeighsThePreviousWindow() {
        SlidingWindowCounter swc = new SlidingWindowCounter(Rate.perHour(10));
        for (int i = 0; i < 10; i++) {
            assertThat(swc.tryAcquire(HOUR - 1).allowed()).isTrue();
        }
        // Halfway into the next window the previous 10 still weigh 5: only 4 more pass (5 + 4 + 1 ≤ 10).
        int admitted = 0;
        for (int i = 0; i < 10; i++) {
            admitted += swc.tryAcquire(HOUR + HOUR / 2).allowed() ? 1 : 0;
        }
        assertThat(admitted).isEqualTo(5);
        Decision refused = swc.tryAcquire(HOUR + HOUR / 2);
        assertThat(refused.allowed()).isFalse();
        // previous·(W − e) + 6·W ≤ 10·W ⇔ e ≥ 0.6·W
        assertThat(HOUR + HOUR / 2 + refused.waitMillis()).isEqualTo(HOUR + HOUR * 6 / 10);
    }

    @Test
    void tokenBucketRefillsAndCapsAtTheBurst() {
        TokenBucket tb = new TokenBucket(Rate.perSecond(2), 3);
        for (int i = 0; i < 3; i++) {
            assertThat(tb.tryAcquire(0).allowed()).isTrue();
        }
        assertThat(tb.tryAcquire(0)).isEqualTo(Decision.refuse(500));
        assertThat(tb.tryAcquire(500).allowed()).isTrue();
        // A long quiet spell refills to b, not more.
        assertThat(tb.tryAcquire(1_000_000_000L).allowed()).isTrue();
        assertThat(tb.tokens()).isEqualTo(2);
    }

    @Test
    void keyedGcraKeepsKeysApartAndBoundsMemory() {
        KeyedLimiter<String> perChat = KeyedLimiter.gcra(Rate.perSecond(1), 1, 2,
                Clock.fixed(Instant.ofEpochMilli(0), ZoneOffset.UTC));
        assertThat(perChat.tryAcquire("a").allowed()).isTrue();
        assertThat(perChat.tryAcquire("a").allowed()).isFalse();
        assertThat(perChat.tryAcquire("b").allowed()).isTrue();
        assertThat(perChat.size()).isEqualTo(2);
        // A third key while "a" and "b" are still within their interval: the LRU one ("a") is dropped.
        assertThat(perChat.tryAcquire("c", 10).allowed()).isTrue();
        assertThat(perChat.size()).isEqualTo(2);
        assertThat(perChat.activeEvictions()).isEqualTo(1);
        // Once idle, keys can go without changing any decision.
        assertThat(perChat.purgeIdle(999)).isZero();
        assertThat(perChat.purgeIdle(1_010)).isEqualTo(2);
        assertThat(perChat.size()).isZero();
    }

    @Test
    void everyAlgorithmReportsIdleOnlyWhenAFreshOneWouldDecideTheSame() {
        Rate rate = Rate.perSecond(2);
        for (Algorithm a : Algorithm.values()) {
            RateLimiter l = a.create(rate, 2);
            assertThat(l.isIdle(0)).as(a.label()).isTrue();
            l.tryAcquire(0);
            assertThat(l.isIdle(1)).as(a.label()).isFalse();
            assertThat(l.isIdle(10_000)).as(a.label()).isTrue();
        }
    }
}
