package dev.sluice.app.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.app.tools.ProduceCommand;
import dev.sluice.config.Settings;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The stack {@code sluice dev} runs, pointed at a provider it did not start (what {@code -D telegram.api.url=...}
 * with a bot token does): no FakeTelegram of its own, no Redis with {@code budget=local}, and a notification
 * produced with {@code sluice produce} reaches that provider with the configured token.
 */
class EmbeddedStackIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");

    @Test
    void sendsToTheGivenProviderUrlWithTheGivenToken(@TempDir Path dir) throws Exception {
        AvroTrust.ensure();
        try (FakeTelegram provider = FakeTelegram.builder().requireToken(TOKEN).start()) {
            EmbeddedStack.Options options = new EmbeddedStack.Options(null, 0, 0, 0, 0, 1, 1, false, FakeTelegramLimits.telegram(),
                    "stack-it", Settings.of(Map.of("telegram.api.url", provider.apiUrl(), "bot.alerts.token", TOKEN)), Settings.empty());
            try (EmbeddedStack stack = EmbeddedStack.start(options, s -> { }, line -> { })) {
                stack.awaitReady(Duration.ofSeconds(90));
                assertThat(stack.telegram()).as("no FakeTelegram of its own").isNull();
                assertThat(stack.redis()).as("budget=local: no Redis").isNull();
                assertThat(stack.providerUrl()).isEqualTo(provider.apiUrl());

                Path file = dir.resolve("one.jsonl");
                Files.write(file, List.of("{\"id\":\"ext-1\",\"bot_id\":\"alerts\",\"chat_id\":\"4242\",\"kind\":\"hello\",\"text\":\"to the real provider\"}"));
                int exit = new CommandLine(new ProduceCommand()).execute("--file", file.toString(), "--progress", "NONE",
                        "-D", "bootstrap.servers=" + stack.kafka().bootstrapServers(), "-D", "schema.registry.url=" + stack.registry().url());
                assertThat(exit).isZero();
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> !provider.acceptedFor("4242").isEmpty());
                assertThat(provider.acceptedFor("4242")).extracting(FakeTelegramAccepted::text).containsExactly("to the real provider");
                assertThat(provider.responseCount(401)).as("the token reached the provider").isZero();
            }
        }
    }
}
