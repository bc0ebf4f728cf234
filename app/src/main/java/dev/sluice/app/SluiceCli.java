package dev.sluice.app;

import dev.sluice.app.demo.DemoCommand;
import dev.sluice.app.plan.PlanCommand;
import dev.sluice.schemas.AvroTrust;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code sluice} command line. */
@Command(name = "sluice", mixinStandardHelpOptions = true, version = "sluice 0.1.0",
        description = "Chat-bot notifications through Kafka Streams under one shared provider budget.",
        subcommands = {DemoCommand.class, dev.sluice.app.dev.DevCommand.class, TopologyCommand.class, SenderCommand.class,
                dev.sluice.app.tools.ProduceCommand.class, dev.sluice.app.tools.ResultsCommand.class,
                dev.sluice.app.tools.ReplayCommand.class, dev.sluice.app.tools.SchemaCommand.class, dev.sluice.app.tools.ChatEventCommand.class,
                PlanCommand.class,
                BudgetCommand.class, FakeTelegramCommand.class, CommandLine.HelpCommand.class})
public final class SluiceCli implements java.util.concurrent.Callable<Integer> {
    /** Exit code of {@code sluice} without a command: it did nothing, so scripts must not read it as success. */
    public static final int EXIT_NO_COMMAND = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        dev.sluice.app.logging.RedactingOutputStream.installOnSystemStreams(); // no secret on stdout/stderr (F8)
        System.exit(run(args));
    }

    public static int run(String... args) {
        AvroTrust.ensure();
        CommandLine cli = new CommandLine(new SluiceCli()).setCaseInsensitiveEnumValuesAllowed(true);
        return dev.sluice.app.logging.RedactingCliErrors.install(cli).execute(args); // no secret on stderr (F8)
    }

    /** {@code sluice} alone: the usage on stderr, and a non-zero exit. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        spec.commandLine().getErr().flush();
        return EXIT_NO_COMMAND;
    }
}
