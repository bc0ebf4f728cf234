package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The command tree without a needed subcommand: the usage on stderr and exit 2, never a silent exit 0. */
class CliUsageTest {
    private record Run(int exit, String out, String err) {
    }

    private static Run sluice(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new SluiceCli()).setCaseInsensitiveEnumValuesAllowed(true)
                .setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void sluiceAloneAndBudgetAlonePrintTheUsageAndExit2() {
        Run alone = sluice();
        assertThat(alone.exit()).isEqualTo(2);
        assertThat(alone.err()).contains("Usage: sluice");

        Run budget = sluice("budget");
        assertThat(budget.exit()).as(budget.out() + budget.err()).isEqualTo(2);
        assertThat(budget.err()).contains("Usage: sluice budget").contains("status");
        assertThat(budget.out()).isEmpty();

        Run help = sluice("budget", "--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("Usage: sluice budget");
    }
}
