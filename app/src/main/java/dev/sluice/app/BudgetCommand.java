package dev.sluice.app;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.config.Settings;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetInspector;
import dev.sluice.sender.budget.BudgetUnavailableException;
import dev.sluice.sender.budget.RedisConnectionConfig;
import dev.sluice.sender.budget.quota.PostgresQuota;
import dev.sluice.sender.budget.quota.QuotaConfig;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sluice budget ...}: look at the shared budget. */
@Command(name = "budget", mixinStandardHelpOptions = true,
        description = "Inspect the shared provider budget in Redis (read-only).",
        subcommands = {BudgetCommand.Status.class, CommandLine.HelpCommand.class})
public final class BudgetCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** {@code sluice budget} without a subcommand: the usage on stderr and exit 2, as {@code sluice} alone. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        spec.commandLine().getErr().flush();
        return SluiceCli.EXIT_NO_COMMAND;
    }

    /**
     * {@code sluice budget status --key KEY}: a key's state read from Redis with TIME, GET, HMGET and SCAN
     * only (nothing is written), interpreted with the {@code budget.*} settings given (pass the senders'
     * properties file: Redis holds TATs, the limits come from the config). With {@code quota.jdbc.url} set and a
     * {@code quota.<key>.limit}, also the key's quota window from PostgreSQL (read-only).
     */
    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Show a budget key's state: TAT, burst left and next free instant, active penalty gates, "
                    + "the AIMD effective rate (and the PostgreSQL quota if configured). Reads only.")
    public static final class Status implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ConfigOptions config;

        @Option(names = "--key", required = true, paramLabel = "KEY", description = "Budget key (bot id), e.g. alerts.")
        String key;

        @Option(names = "--chat", paramLabel = "CHAT_ID", description = "Also show this chat's (and group's) GCRA.")
        String chat;

        @Option(names = "--redis-url", paramLabel = "URL", description = "Redis to read (default: redis.url of the config).")
        String redisUrl;

        @Option(names = "--json", description = "Print JSON instead of text.")
        boolean json;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                Settings s = config.load();
                if (redisUrl != null) {
                    s = s.with(RedisConnectionConfig.URL.name(), redisUrl);
                }
                String url = s.required(RedisConnectionConfig.URL.name());
                BudgetConfig budgetConfig = BudgetConfig.from(s);
                BudgetInspector.Status status;
                try (BudgetInspector inspector = new BudgetInspector(url, budgetConfig, Duration.ofSeconds(2))) {
                    status = inspector.status(key, chat);
                }
                Optional<PostgresQuota.Usage> quota = Optional.empty();
                Optional<QuotaConfig> quotaConfig = QuotaConfig.fromIfSet(s);
                if (quotaConfig.isPresent()) {
                    try (PostgresQuota store = new PostgresQuota(quotaConfig.get())) {
                        quota = store.usage(key);
                    }
                }
                if (json) {
                    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
                    ObjectNode node = mapper.valueToTree(status);
                    quota.ifPresent(q -> node.set("quota", mapper.valueToTree(q)));
                    out.println(mapper.writeValueAsString(node));
                } else {
                    print(status, quota, out);
                }
                out.flush();
                return 0;
            } catch (IllegalArgumentException e) { // ConfigException included
                err.println("sluice budget status: " + dev.sluice.chat.Identifiers.escapeInvisible(e.getMessage()));
                err.flush();
                return 2;
            } catch (BudgetUnavailableException | SQLException e) {
                err.println("sluice budget status: " + dev.sluice.chat.Identifiers.escapeInvisible(e.getMessage()));
                err.flush();
                return 1;
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }

        static void print(BudgetInspector.Status s, Optional<PostgresQuota.Usage> quota, PrintWriter out) {
            out.printf("key %s at %s (Redis time)%n", dev.sluice.chat.Identifiers.escape(s.key()),
                    instant(s.redisTimeEpochMicros()));
            out.printf("  rate      %.3f/s effective of %.3f/s configured (less budget.global.arrival.margin.ms; AIMD multiplier %.3f%s)%n",
                    s.effectiveRatePerS(), s.configuredRatePerS(), s.aimdMultiplier(),
                    s.aimdClimbsFromEpochMicros() == null ? "" : ", climbing from " + instant(s.aimdClimbsFromEpochMicros()));
            out.printf("  global    %s%n", gcra(s.global(), s.redisTimeEpochMicros()));
            out.printf("  backfill  TAT %s%n", s.backfillTatEpochMicros() == null ? "none (idle)"
                    : instant(s.backfillTatEpochMicros()));
            if (s.gates().isEmpty()) {
                out.println("  gates     none active");
            } else {
                for (BudgetInspector.Gate g : s.gates()) {
                    out.printf("  gate      %s%s lifts in %d ms%n", g.scope(), g.id() == null ? "" : " " + g.id(), g.remainingMs());
                }
            }
            out.printf("  horizon   %s%n", s.criticalMarkMs() != null
                    ? "routine lanes short: a CRITICAL grant, its mark lives " + s.criticalMarkMs() + " ms more"
                    : "no CRITICAL mark: routine lanes reserve up to budget.reservation.max.ms (unless "
                    + "budget.reservation.critical.memory.ms=0)");
            if (s.chat() != null) {
                out.printf("  chat %s  %s%n", dev.sluice.chat.Identifiers.escape(s.chatId()),
                        gcra(s.chat(), s.redisTimeEpochMicros()));
            }
            if (s.group() != null) {
                out.printf("  group %s %s%n", dev.sluice.chat.Identifiers.escape(s.chatId()),
                        gcra(s.group(), s.redisTimeEpochMicros()));
            }
            quota.ifPresent(q -> out.printf("  quota     %d of %d used in window %d, window ends in %d ms%n",
                    q.used(), q.quota(), q.windowId(), q.windowEndsInMs()));
            senders(s.senders(), out);
        }

        /** The live senders' published limits against the settings this reading was interpreted with. */
        private static void senders(java.util.List<BudgetInspector.Publisher> senders, PrintWriter out) {
            if (senders.isEmpty()) {
                out.println("  senders   none published limits of this key in the last 90 s (the figures above use "
                        + "this command's budget.* settings only)");
                return;
            }
            long differing = senders.stream().filter(p -> !p.differences().isEmpty()).count();
            out.printf("  senders   %d live; %s%n", senders.size(), differing == 0
                    ? "all decide with the budget.* settings this reading used"
                    : differing + " decide with other limits than this reading used (pass their properties file)");
            for (BudgetInspector.Publisher p : senders) {
                out.printf("    %s  %s%n", dev.sluice.chat.Identifiers.escape(p.instance()), p.differences().isEmpty()
                        ? "same limits"
                        : dev.sluice.chat.Identifiers.escapeInvisible(String.join(", ", p.differences())));
            }
        }

        private static String gcra(BudgetInspector.Gcra g, long now) {
            String tat = g.tatEpochMicros() == null ? "none (idle)" : instant(g.tatEpochMicros())
                    + " (" + (g.tatEpochMicros() - now >= 0 ? "+" : "") + (g.tatEpochMicros() - now) / 1000 + " ms)";
            return "TAT " + tat + "; burst left " + g.remainingBurst() + " of " + g.burst() + "; next free "
                    + (g.nextFreeInMs() == 0 ? "now" : "in " + g.nextFreeInMs() + " ms");
        }

        private static String instant(long epochMicros) {
            return Instant.ofEpochSecond(epochMicros / 1_000_000, (epochMicros % 1_000_000) * 1000).toString();
        }
    }
}
