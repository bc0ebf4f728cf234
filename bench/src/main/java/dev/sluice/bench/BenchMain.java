package dev.sluice.bench;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * Runs a benchmark scenario by name: {@code java -jar bench/target/sluice-bench.jar <scenario> [options]}.
 *
 * <p>Scenarios: {@code budget-vs-bucket4j} ({@link BudgetVsBucket4j}); issue 7's {@code utilisation}
 * ({@link Utilisation}), {@code many-bots} ({@link ManyBots}), {@code flood} ({@link Flood}),
 * {@code topology-throughput} ({@link TopologyThroughput}) and {@code chaos} ({@link Chaos}), each with
 * {@code [--json FILE] [--scale X]} (X a factor on the full sizes, default 1); {@code jfr-summary}
 * ({@link JfrSummary}) summarises flight recordings.
 */
public final class BenchMain {
    private static final Map<String, Scenario> SCENARIOS = new TreeMap<>(Map.of(
            "budget-vs-bucket4j", BudgetVsBucket4j::run,
            "utilisation", Utilisation::run,
            "chaos", Chaos::run,
            "topology-throughput", TopologyThroughput::run,
            "many-bots", ManyBots::run,
            "flood", Flood::run,
            "jfr-summary", JfrSummary::run));

    /** One named benchmark; returns the process exit code. */
    @FunctionalInterface
    interface Scenario {
        int run(String[] args) throws Exception;
    }

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || !SCENARIOS.containsKey(args[0])) {
            System.err.println("usage: java -jar sluice-bench.jar <scenario> [options]; scenarios: " + SCENARIOS.keySet());
            System.err.println("  budget-vs-bucket4j [--json FILE] [--seconds N] [--clients 1,16] [--rate R] [--burst B]");
            System.err.println("  utilisation|many-bots|flood|topology-throughput|chaos [--json FILE] [--scale X] (see BENCHMARKS.md)");
            System.err.println("  many-bots also: [--no-baseline] [--jfr DIR] [--redis standalone|cluster|both] [--warmup-seconds MIN (120)]"
                    + " [--warmup-max-seconds MAX (3 x MIN)] [--settle-jit-share S (0.05)]");
            System.err.println("  jfr-summary FILE.jfr... [--from EPOCH_MS --to EPOCH_MS] [--top N]");
            System.exit(2);
        }
        int code = SCENARIOS.get(args[0]).run(Arrays.copyOfRange(args, 1, args.length));
        System.exit(code);
    }
}
