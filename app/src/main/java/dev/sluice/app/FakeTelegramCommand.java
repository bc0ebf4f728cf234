package dev.sluice.app;

import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import java.net.InetAddress;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Runs the fake Telegram Bot API server on its own, e.g. for docker-compose or a manual try. */
@Command(name = "fake-telegram", mixinStandardHelpOptions = true,
        description = "Serve a fake Telegram Bot API (sendMessage) that enforces the documented limits and answers 429 with retry_after.")
public final class FakeTelegramCommand implements Callable<Integer> {
    @Option(names = "--port", defaultValue = "8081", description = "Port to listen on (default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--bind-address", defaultValue = "127.0.0.1",
            description = "Local address to listen on (default ${DEFAULT-VALUE}, loopback only); 0.0.0.0 lets other containers reach it.")
    InetAddress bindAddress;

    @Option(names = "--bot-per-second", defaultValue = "30", description = "Messages per second per bot (Telegram Bot API FAQ: about 30).")
    int botPerSecond;

    @Option(names = "--group-per-minute", defaultValue = "20", description = "Messages per minute per group (Telegram Bot API FAQ: 20).")
    int groupPerMinute;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "--port " + port + ": expected 0 (a free one) or 1..65535");
        }
        if (botPerSecond < 1) {
            throw new ParameterException(spec.commandLine(), "--bot-per-second " + botPerSecond + ": expected at least 1");
        }
        if (groupPerMinute < 1) {
            throw new ParameterException(spec.commandLine(), "--group-per-minute " + groupPerMinute + ": expected at least 1");
        }
        FakeTelegramLimits limits = FakeTelegramLimits.telegram().withGlobalPerSecond(botPerSecond).withGroupPerMinute(groupPerMinute);
        FakeTelegram fake = FakeTelegram.builder().port(port).bindAddress(bindAddress).limits(limits).start();
        System.out.println("fake Telegram Bot API on " + bindAddress.getHostAddress() + ":" + fake.port()
                + ", e.g. " + fake.apiUrl() + " (set telegram.api.url to this)");
        Shutdown.awaitThenClose(fake, "fake-telegram");
        return 0;
    }
}
