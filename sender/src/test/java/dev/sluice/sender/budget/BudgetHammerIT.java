package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The exactness check: 3 JVM processes × 16 threads hammer one bot for 10 s at rate 10/s, burst
 * 10. Admitted must equal 10 + 10·T within one token, T being the time from the first to the last grant
 * (all processes on one machine, one wall clock): no over-admission, and no refusal while tokens remain.
 * Redis decides at an instant the client can only bracket (between sending the call and reading its answer;
 * a loaded CI machine can stall a thread in between), so the over-admission bound uses the outer bracket
 * (first call sent → last answer read) and the under-admission bound the inner one.
 * The three processes' budget clients run with clocks offset by −10 s, 0 and +10 s: the script ignores
 * client time, so this changes nothing.
 */
class BudgetHammerIT {
    private static final Pattern RESULT = Pattern.compile(
            "RESULT granted=(\\d+) refused=(\\d+) firstSent=(-?\\d+) firstDone=(-?\\d+) lastSent=(-?\\d+)"
                    + " lastDone=(-?\\d+) state=(\\w+) errors=(\\d+)");

    @Test
    void three_processes_of_16_threads_get_exactly_burst_plus_rate_times_T() throws Exception {
        double rate = 10;
        int burst = 10;
        long durationMs = 10_000;
        String bot = "hammer-" + UUID.randomUUID().toString().substring(0, 8);
        try (RedisInstance redis = RedisLauncher.start()) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<Process> children = new ArrayList<>();
            List<BufferedReader> outs = new ArrayList<>();
            List<StringBuilder> outputs = new ArrayList<>();
            long[] offsets = {-10_000, 0, 10_000};
            for (long offset : offsets) {
                Process p = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                        HammerMain.class.getName(), redis.url(), bot, Double.toString(rate), Integer.toString(burst),
                        "16", Long.toString(durationMs), Long.toString(offset))
                        .redirectErrorStream(true).start();
                children.add(p);
                outs.add(new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
                outputs.add(new StringBuilder());
            }
            for (int i = 0; i < children.size(); i++) {
                String line;
                while ((line = outs.get(i).readLine()) != null && !line.equals("READY")) {
                    outputs.get(i).append(line).append('\n');
                }
                assertThat(line).as("child %d did not get ready:%n%s", i, outputs.get(i)).isEqualTo("READY");
            }
            long startAt = System.currentTimeMillis() + 300;
            for (Process p : children) {
                p.getOutputStream().write((startAt + "\n").getBytes(StandardCharsets.UTF_8));
                p.getOutputStream().flush();
            }
            long granted = 0;
            long firstSent = Long.MAX_VALUE;
            long firstDone = Long.MAX_VALUE;
            long lastSent = Long.MIN_VALUE;
            long lastDone = Long.MIN_VALUE;
            for (int i = 0; i < children.size(); i++) {
                String result = null;
                for (String line; (line = outs.get(i).readLine()) != null; ) {
                    outputs.get(i).append(line).append('\n');
                    if (line.startsWith("RESULT")) {
                        result = line;
                    }
                }
                assertThat(children.get(i).waitFor(60, TimeUnit.SECONDS)).isTrue();
                assertThat(result).as("child output:%n%s", outputs.get(i)).isNotNull();
                System.out.println(result);
                Matcher m = RESULT.matcher(result);
                assertThat(m.matches()).as(result).isTrue();
                assertThat(m.group(7)).as("decided by Redis throughout").isEqualTo("SHARED");
                assertThat(m.group(8)).as("no Redis failure").isEqualTo("0");
                assertThat(Long.parseLong(m.group(1))).as("every process got grants: %s", result).isPositive();
                granted += Long.parseLong(m.group(1));
                firstSent = Math.min(firstSent, Long.parseLong(m.group(3)));
                firstDone = Math.min(firstDone, Long.parseLong(m.group(4)));
                lastSent = Math.max(lastSent, Long.parseLong(m.group(5)));
                lastDone = Math.max(lastDone, Long.parseLong(m.group(6)));
            }
            double outer = (lastDone - firstSent) / 1000d;
            double inner = Math.max(0, lastSent - firstDone) / 1000d;
            assertThat(outer).as("the run lasted about 10 s").isBetween(9.0, 10.5);
            double most = burst + rate * outer;
            double least = burst + rate * inner;
            System.out.printf("granted %d; T between %.3f and %.3f s; burst + rate·T between %.1f and %.1f%n",
                    granted, inner, outer, least, most);
            assertThat((double) granted).as("no over-admission: granted %d, T <= %.3f s, burst + rate·T <= %.1f",
                    granted, outer, most).isLessThanOrEqualTo(most + 1);
            assertThat((double) granted).as("no refusal while tokens remain: granted %d, T >= %.3f s, burst + rate·T >= %.1f",
                    granted, inner, least).isGreaterThanOrEqualTo(least - 1);
            assertThat(outer - inner).as("the brackets are tight enough to mean something").isLessThan(0.5);
        }
    }
}
