package dev.sluice.app.plan;

import dev.sluice.limits.Durations;
import dev.sluice.limits.Rate;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code sluice plan}: replays a history of events (CSV with ISO-8601 instants, e.g. a USGS ComCat
 * export) through each rate-limiting algorithm and answers "what burst loses nothing on my
 * history?".
 *
 * <p>Exit codes: 0 done; 1 the events file cannot be read or has a bad row (stderr names line, field
 * and value); 2 bad options (picocli usage error).
 */
@Command(name = "plan", mixinStandardHelpOptions = true,
        description = {
            "Replay a history of events through fixed window, sliding log, sliding-window counter, "
                + "token bucket and GCRA; print admitted, refused and the most admitted in the busiest window "
                + "per algorithm, and the smallest burst with which a token bucket (or GCRA) at the rate "
                + "refuses nothing, with the worst stretch of the history.",
            "Example: sluice plan --events data/usgs/m5_2015-2025_complete_segments.csv --rate 5/h"
        })
public final class PlanCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--events", required = true, paramLabel = "FILE.csv",
            description = "CSV with a header row; the time column (--time-column, default time_utc_iso, "
                + "else the first column) holds ISO-8601 instants such as 2025-07-29T23:24:52.483Z.")
    Path events;

    @Option(names = "--rate", required = true, paramLabel = "RATE", converter = RateConverter.class,
            description = "Sustained rate: <count>/<period>, e.g. 5/h, 30/s, 20/min. The window algorithms "
                + "allow <count> per <period>.")
    Rate rate;

    @Option(names = "--burst", paramLabel = "N",
            description = "Burst b of token bucket and GCRA (default: the rate's count).")
    Long burst;

    @Option(names = "--window", paramLabel = "DURATION",
            description = "Window in which 'most admitted' is measured, e.g. 1h, 30min, PT6H (default: the rate's period).")
    String window;

    @Option(names = "--time-column", paramLabel = "NAME", defaultValue = EventHistory.DEFAULT_TIME_COLUMN,
            description = "Name of the time column (default: ${DEFAULT-VALUE}; the first column if absent).")
    String timeColumn;

    @Option(names = "--json", description = "Print JSON instead of the table.")
    boolean json;

    @Option(names = "--chart", paramLabel = "FILE.svg",
            description = "Also write an SVG time line: admitted and refused events per algorithm.")
    Path chart;

    /** The largest burst the GCRA (limits' GcraPolicy) takes. */
    static final long MAX_BURST = 1_000_000_000L;

    @Override
    public Integer call() {
        CommandLine cmd = spec.commandLine();
        long burstValue = burst == null ? rate.count() : burst;
        if (burstValue < 1 || burstValue > MAX_BURST) {
            throw new ParameterException(cmd, "Invalid value for option '--burst': must be 1.." + MAX_BURST + ", got " + burstValue);
        }
        long windowMillis;
        try {
            windowMillis = window == null ? rate.periodMillis() : Durations.parseMillis(window, "--window");
        } catch (IllegalArgumentException e) {
            throw new ParameterException(cmd, "Invalid value for option '--window': " + e.getMessage());
        }
        PrintWriter out = cmd.getOut();
        PrintWriter err = cmd.getErr();
        EventHistory history;
        try {
            history = EventHistory.read(events, timeColumn);
        } catch (PlanInputException e) {
            err.println("sluice plan: " + e.getMessage());
            err.flush();
            return 1;
        }
        PlanReport report = PlanReport.compute(history, rate, burstValue, windowMillis);
        if (json) {
            out.println(PlanJson.write(report));
        } else {
            PlanText.print(report, out);
        }
        if (chart != null) {
            try {
                Files.writeString(chart, SvgChart.render(report), StandardCharsets.UTF_8);
            } catch (IOException e) {
                err.println("sluice plan: cannot write chart " + chart + ": " + e);
                err.flush();
                return 1;
            }
            if (!json) {
                out.println("chart: " + chart);
            }
        }
        out.flush();
        return 0;
    }

    /** picocli converter: {@link Rate#parse}, with its message naming the bad value. */
    static final class RateConverter implements CommandLine.ITypeConverter<Rate> {
        @Override
        public Rate convert(String value) {
            try {
                return Rate.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
