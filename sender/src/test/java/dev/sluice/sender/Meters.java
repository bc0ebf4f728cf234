package dev.sluice.sender;

import dev.sluice.metrics.SluiceMetrics;

/** Readings of one sender's meters for tests (each test sender has its own registry). */
final class Meters {
    private Meters() {
    }

    static long rateLimited(SenderService s) {
        return Fakes.count(s.registry(), SluiceMetrics.RATE_LIMITED);
    }

    static long delivered(SenderService s) {
        return Fakes.count(s.registry(), SluiceMetrics.RESULTS, SluiceMetrics.TAG_STATUS, "DELIVERED");
    }

    static long results(SenderService s) {
        return Fakes.count(s.registry(), SluiceMetrics.RESULTS);
    }

    static long pauses(SenderService s) {
        return Fakes.count(s.registry(), SluiceMetrics.BACKPRESSURE_PAUSES);
    }

    static long refusals(SenderService s) {
        return Fakes.count(s.registry(), SluiceMetrics.BUDGET_REFUSALS);
    }

    static long providerRequests(SenderService s) {
        return Fakes.count(s.registry(), SluiceMetrics.PROVIDER_REQUESTS);
    }

    /** Sum of every counter named {@code name} of this sender, whatever its tags. */
    static long sum(SenderService s, String name) {
        return Fakes.count(s.registry(), name);
    }
}
