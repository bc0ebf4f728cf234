package dev.sluice.limits;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Assume;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Properties on random streams (non-decreasing instants, bursts with equal instants included). */
class LimiterPropertiesTest {

    /** Near today's epoch ms, so the scaled arithmetic (ms × count) is exercised at real magnitudes. */
    private static final long BASE = 1_753_831_492_483L;

    record Scenario(long[] instants, Rate rate, long burst) {
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        Arbitrary<long[]> streams = Arbitraries.longs().between(0, 400)
                .injectDuplicates(0.1)
                .list().ofMinSize(0).ofMaxSize(40)
                .map(LimiterPropertiesTest::toInstants);
        Arbitrary<Rate> rates = Combinators.combine(
                Arbitraries.longs().between(1, 7),
                Arbitraries.of(1L, 7L, 10L, 100L, 333L, 1000L)).as(Rate::new);
        Arbitrary<Long> bursts = Arbitraries.longs().between(1, 6);
        return Combinators.combine(streams, rates, bursts).as(Scenario::new);
    }

    private static long[] toInstants(List<Long> gaps) {
        long[] instants = new long[gaps.size()];
        long t = BASE;
        for (int i = 0; i < instants.length; i++) {
            // Many zero gaps: simultaneous requests are where bursts show.
            t += gaps.get(i) % 3 == 0 ? 0 : gaps.get(i);
            instants[i] = t;
        }
        return instants;
    }

    @Property(tries = 300)
    void gcraAndTokenBucketDecideIdentically(@ForAll("scenarios") Scenario s) {
        Gcra gcra = new Gcra(s.rate(), s.burst());
        TokenBucket bucket = new TokenBucket(s.rate(), s.burst());
        for (long t : s.instants()) {
            assertThat(gcra.tryAcquire(t)).as("at %d", t).isEqualTo(bucket.tryAcquire(t));
        }
    }

    @Property(tries = 200)
    void noAlgorithmExceedsItsPromisedBoundInAnyInterval(@ForAll("scenarios") Scenario s) {
        for (Algorithm a : Algorithm.values()) {
            Evaluation e = Evaluator.evaluate(s.instants(), a.create(s.rate(), s.burst()), 1);
            long[] admitted = admittedInstants(s.instants(), e);
            for (int i = 0; i < admitted.length; i++) {
                for (int j = i; j < admitted.length; j++) {
                    long span = admitted[j] - admitted[i];
                    long inSpan = countWithin(admitted, admitted[i], admitted[j]);
                    assertThat(inSpan)
                            .as("%s %s b=%d: [%d, %d]", a.label(), s.rate(), s.burst(), admitted[i], admitted[j])
                            .isLessThanOrEqualTo(a.maxAdmitted(s.rate(), s.burst(), span));
                }
            }
        }
    }

    @Property(tries = 200)
    void slidingLogNeverAdmitsMoreThanNInAWindow(@ForAll("scenarios") Scenario s) {
        Evaluation e = Evaluator.evaluate(s.instants(), new SlidingLog(s.rate()), s.rate().periodMillis());
        assertThat((long) e.maxInWindow()).isLessThanOrEqualTo(s.rate().count());
    }

    @Property(tries = 100)
    void aRefusedRequestPassesExactlyAfterTheReturnedWait(@ForAll("scenarios") Scenario s) {
        long[] t = s.instants();
        for (Algorithm a : Algorithm.values()) {
            RateLimiter live = a.create(s.rate(), s.burst());
            for (int k = 0; k < t.length; k++) {
                Decision d = live.tryAcquire(t[k]);
                if (d.allowed()) {
                    continue;
                }
                assertThat(replay(a, s, k).tryAcquire(t[k] + d.waitMillis()).allowed())
                        .as("%s %s b=%d: request %d at +wait %d", a.label(), s.rate(), s.burst(), k, d.waitMillis())
                        .isTrue();
                assertThat(replay(a, s, k).tryAcquire(t[k] + d.waitMillis() - 1).allowed())
                        .as("%s: request %d one ms before the wait", a.label(), k)
                        .isFalse();
            }
        }
    }

    @Property(tries = 300)
    void plannerBurstIsTheSmallestThatLosesNothing(@ForAll("scenarios") Scenario s) {
        CapacityPlan plan = CapacityPlanner.minLosslessBurst(s.instants(), s.rate());
        long bruteForce = 1;
        while (refuses(s.instants(), s.rate(), bruteForce)) {
            bruteForce++;
        }
        assertThat(plan.minLosslessBurst()).isEqualTo(bruteForce);
        assertThat(refuses(s.instants(), s.rate(), plan.minLosslessBurst())).isFalse();
        if (plan.minLosslessBurst() > 1) {
            assertThat(refuses(s.instants(), s.rate(), plan.minLosslessBurst() - 1)).isTrue();
            // The worst stretch alone needs that burst: its events exceed (b − 1) + r·(span).
            long events = plan.worstEvents();
            long span = plan.worstEndMillis() - plan.worstStartMillis();
            assertThat(events * s.rate().periodMillis() - s.rate().count() * span)
                    .isGreaterThan((plan.minLosslessBurst() - 1) * s.rate().periodMillis());
        }
    }

    @Property(tries = 200)
    void busiestWindowMatchesBruteForce(@ForAll("scenarios") Scenario s, @ForAll @IntRange(min = 1, max = 2000) int window) {
        int[] busiest = Evaluator.busiestWindow(s.instants(), null, window);
        long[] t = s.instants();
        int best = 0;
        for (int i = 0; i < t.length; i++) {
            int n = 0;
            for (long x : t) {
                n += (x >= t[i] && x < t[i] + window) ? 1 : 0;
            }
            best = Math.max(best, n);
        }
        assertThat(busiest[0]).isEqualTo(best);
    }

    @Property(tries = 200)
    void aBatchPassesExactlyWhenAllItsSingleRequestsWouldAndWaitsTheSame(@ForAll("scenarios") Scenario s,
                                                                      @ForAll @IntRange(min = 1, max = 6) int permits) {
        Assume.that(permits <= s.burst());
        GcraPolicy policy = new GcraPolicy(s.rate(), s.burst());
        long tat = GcraPolicy.EMPTY_TAT;
        for (long t : s.instants()) {
            GcraPolicy.Result batch = policy.decide(tat, t, permits);
            long singles = tat;
            boolean all = true;
            for (int k = 0; k < permits && all; k++) {
                GcraPolicy.Result one = policy.decide(singles, t);
                all = one.decision().allowed();
                singles = one.tat();
            }
            assertThat(batch.decision().allowed()).isEqualTo(all);
            if (all) {
                assertThat(batch.tat()).isEqualTo(singles);
            } else {
                // Waiting exactly the returned time lets the whole batch through, one ms less does not.
                long w = batch.decision().waitMillis();
                assertThat(policy.decide(tat, t + w, permits).decision().allowed()).isTrue();
                assertThat(policy.decide(tat, t + w - 1, permits).decision().allowed()).isFalse();
            }
            tat = batch.tat();
        }
    }

    private static boolean refuses(long[] instants, Rate rate, long burst) {
        return Evaluator.evaluate(instants, new TokenBucket(rate, burst), 1).refused() > 0;
    }

    private static RateLimiter replay(Algorithm a, Scenario s, int upTo) {
        RateLimiter l = a.create(s.rate(), s.burst());
        for (int i = 0; i < upTo; i++) {
            l.tryAcquire(s.instants()[i]);
        }
        return l;
    }

    private static long[] admittedInstants(long[] instants, Evaluation e) {
        return java.util.stream.IntStream.range(0, instants.length)
                .filter(e::admitted).mapToLong(i -> instants[i]).toArray();
    }

    private static long countWithin(long[] sorted, long from, long to) {
        long n = 0;
        for (long x : sorted) {
            n += (x >= from && x <= to) ? 1 : 0;
        }
        return n;
    }
}
