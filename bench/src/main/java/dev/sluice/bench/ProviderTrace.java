package dev.sluice.bench;

import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The provider's side of a run's 429s, from FakeTelegram's call log: which rule refused (by scope) and, for each 429,
 * what the refused bot and chat had sent in the sliding second before it (a bot-wide 429 with 30 sends that span less
 * than a second is the global limit; one send in the chat, the chat's). For the many-bots report (issue 19: the 429s
 * with reserved batches). Called once after a run, on the bench's main thread.
 */
final class ProviderTrace {
    private ProviderTrace() {
    }

    /** The first {@code max} 429s, one line each, and the count by scope; "none" without a 429. */
    static String of429s(FakeTelegram telegram, int max) {
        List<FakeTelegramCall> refused = telegram.calls().stream().filter(c -> c.status() == 429).limit(max).toList();
        if (refused.isEmpty()) {
            return "none";
        }
        List<FakeTelegramAccepted> accepted = telegram.accepted();
        List<String> lines = new ArrayList<>();
        for (FakeTelegramCall c : refused) {
            long at = c.atMillis();
            List<Long> bot = new ArrayList<>();
            int chat = 0;
            for (FakeTelegramAccepted a : accepted) {
                if (a.botId().equals(c.botId()) && a.acceptedAtMillis() > at - 1000 && a.acceptedAtMillis() <= at) {
                    bot.add(a.acceptedAtMillis());
                    if (a.chatId().equals(c.chatId())) {
                        chat++;
                    }
                }
            }
            long first = bot.stream().mapToLong(Long::longValue).min().orElse(at);
            long last = bot.stream().mapToLong(Long::longValue).max().orElse(at);
            lines.add(String.format(Locale.ROOT, "429 to bot %s chat %s: in the second before it the bot had %d accepted"
                    + " sends (spanning %d ms, the last %d ms before), the chat %d", c.botId(), c.chatId(), bot.size(),
                    last - first, at - last, chat));
        }
        return telegram.rejected429ByScope() + "; " + String.join("; ", lines);
    }
}
