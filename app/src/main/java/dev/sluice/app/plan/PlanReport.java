package dev.sluice.app.plan;

import dev.sluice.limits.Algorithm;
import dev.sluice.limits.CapacityPlan;
import dev.sluice.limits.CapacityPlanner;
import dev.sluice.limits.Evaluation;
import dev.sluice.limits.Evaluator;
import dev.sluice.limits.Rate;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Everything {@code sluice plan} shows: each algorithm's result on the history, the offered load's
 * busiest window and the smallest lossless burst with its worst stretch.
 *
 * @param history            the events
 * @param rate               the rate r (window algorithms: N = count per W = period)
 * @param burst              the burst b given to token bucket and GCRA
 * @param windowMillis       the window in which "most admitted" is measured
 * @param offeredMaxInWindow most events of the history in any window
 * @param results            per algorithm, in {@link Algorithm} order
 * @param plan               the smallest lossless burst at r and its worst stretch
 */
record PlanReport(EventHistory history, Rate rate, long burst, long windowMillis, int offeredMaxInWindow,
                  Map<Algorithm, Evaluation> results, CapacityPlan plan) {

    static PlanReport compute(EventHistory history, Rate rate, long burst, long windowMillis) {
        long[] instants = history.instantsMillis();
        Map<Algorithm, Evaluation> results = new LinkedHashMap<>();
        for (Algorithm algorithm : Algorithm.values()) {
            results.put(algorithm, Evaluator.evaluate(instants, algorithm.create(rate, burst), windowMillis));
        }
        int offered = Evaluator.busiestWindow(instants, null, windowMillis)[0];
        return new PlanReport(history, rate, burst, windowMillis, offered, results,
                CapacityPlanner.minLosslessBurst(instants, rate));
    }
}
