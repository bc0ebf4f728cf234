package dev.sluice.app;

import dev.sluice.app.demo.DemoCommand;
import dev.sluice.app.plan.PlanCommand;
import dev.sluice.schemas.AvroTrust;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code sluice} command line. */
@Command(name = "sluice", mixinStandardHelpOptions = true, version = "sluice 0.1.0",
        description = "Chat-bot notifications through Kafka Streams under one shared provider budget.",
        subcommands = {DemoCommand.class, TopologyCommand.class, SenderCommand.class, PlanCommand.class,
                FakeTelegramCommand.class, BudgetCommand.class, dev.sluice.app.tools.ProduceCommand.class, dev.sluice.app.tools.ReplayCommand.class,
                dev.sluice.app.tools.ChatEventCommand.class,
                CommandLine.HelpCommand.class})
public final class SluiceCli implements Runnable {

    public static void main(String[] args) {
        dev.sluice.app.logging.RedactingOutputStream.installOnSystemStreams(); // no secret on stdout/stderr (F8)
        System.exit(run(args));
    }

    public static int run(String... args) {
        AvroTrust.ensure();
        CommandLine cli = new CommandLine(new SluiceCli()).setCaseInsensitiveEnumValuesAllowed(true);
        return dev.sluice.app.logging.RedactingCliErrors.install(cli).execute(args); // no secret on stderr (F8)
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
