package dev.sluice.sender.budget;

import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_DECREASE;
import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_FLOOR;
import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_INCREASE;
import static dev.sluice.sender.budget.BudgetConfigKeys.ARRIVAL_GUARD_LIMIT;
import static dev.sluice.sender.budget.BudgetConfigKeys.BACKFILL_HEADROOM;
import static dev.sluice.sender.budget.BudgetConfigKeys.BOT_PAID_SUFFIX;
import static dev.sluice.sender.budget.BudgetConfigKeys.BOT_RATE_SUFFIX;
import static dev.sluice.sender.budget.BudgetConfigKeys.CHAT_BURST;
import static dev.sluice.sender.budget.BudgetConfigKeys.CHAT_RATE;
import static dev.sluice.sender.budget.BudgetConfigKeys.CIRCUIT_MINIMUM_CALLS;
import static dev.sluice.sender.budget.BudgetConfigKeys.GLOBAL_BURST;
import static dev.sluice.sender.budget.BudgetConfigKeys.GLOBAL_RATE;
import static dev.sluice.sender.budget.BudgetConfigKeys.GROUP_ARRIVAL_MARGIN_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.GROUP_BURST;
import static dev.sluice.sender.budget.BudgetConfigKeys.GROUP_RATE;
import static dev.sluice.sender.budget.BudgetConfigKeys.MAX_REPLICAS;
import static dev.sluice.sender.budget.BudgetConfigKeys.OUTAGE_MODE;
import static dev.sluice.sender.budget.BudgetConfigKeys.PAID_RATE;
import static dev.sluice.sender.budget.BudgetConfigKeys.PROBE_INTERVAL_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_LATE_MAX_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_MAX_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_ROUTINE_MAX_MS;

import dev.sluice.config.Settings;

/**
 * Reads a {@link BudgetConfig} from {@link Settings}: every key of {@link BudgetConfigKeys} (each optional, read
 * through its definition) and the per-bot families {@code bot.<id>.rate.per.s} and {@code bot.<id>.paid.broadcast}.
 * A bad value is a {@code ConfigException} naming the key and the value. Stateless: static methods only.
 */
final class BudgetConfigReader {
    private BudgetConfigReader() {
    }

    static BudgetConfig read(Settings s) {
        BudgetConfigBuilder b = BudgetConfig.builder(new BudgetLimits(GLOBAL_RATE.read(s), Math.toIntExact(GLOBAL_BURST.read(s)),
                CHAT_RATE.read(s), Math.toIntExact(CHAT_BURST.read(s)),
                GROUP_RATE.read(s), Math.toIntExact(GROUP_BURST.read(s))));
        s.withPrefix("bot.").forEach((rest, value) -> {
            if (rest.endsWith(BOT_RATE_SUFFIX)) {
                String bot = botId(rest, BOT_RATE_SUFFIX);
                b.botRate(bot, s.positiveDouble("bot." + rest, 1));
            } else if (rest.endsWith(BOT_PAID_SUFFIX)) {
                String bot = botId(rest, BOT_PAID_SUFFIX);
                if (s.bool("bot." + rest, false)) {
                    b.paidBroadcast(bot);
                }
            }
        });
        return b.paidRatePerS(PAID_RATE.read(s))
                .backfillHeadroom(BACKFILL_HEADROOM.read(s))
                .aimd(AIMD_DECREASE.read(s), AIMD_INCREASE.read(s), AIMD_FLOOR.read(s))
                .outageMode(OUTAGE_MODE.read(s))
                .failoverPolicy(BudgetConfigKeys.FAILOVER_POLICY.read(s)).evictionCheck(BudgetConfigKeys.EVICTION_CHECK.read(s))
                .limitsCheck(BudgetConfigKeys.LIMITS_CHECK.read(s))
                .maxReplicas(Math.toIntExact(MAX_REPLICAS.read(s)))
                .probeInterval(PROBE_INTERVAL_MS.read(s))
                .reservationMax(RESERVATION_MAX_MS.read(s))
                .reservationRoutineMax(RESERVATION_ROUTINE_MAX_MS.read(s))
                .reservationCriticalMemory(BudgetConfigKeys.RESERVATION_CRITICAL_MEMORY_MS.read(s))
                .penaltyProbeWindow(BudgetConfigKeys.PENALTY_PROBE_WINDOW_MS.read(s))
                .reservationLateMax(RESERVATION_LATE_MAX_MS.read(s))
                .circuitMinimumCalls(Math.toIntExact(CIRCUIT_MINIMUM_CALLS.read(s)))
                .arrivalGuardLimitPerS(Math.toIntExact(ARRIVAL_GUARD_LIMIT.read(s)))
                .groupArrivalMargin(GROUP_ARRIVAL_MARGIN_MS.read(s))
                .globalArrivalMargin(BudgetConfigKeys.GLOBAL_ARRIVAL_MARGIN_MS.read(s))
                .build();
    }

    static void check(boolean ok, String key, Object value, String rule) {
        if (!ok) {
            throw Settings.invalid(key, String.valueOf(value), rule);
        }
    }

    private static String botId(String rest, String suffix) {
        String bot = rest.substring(0, rest.length() - suffix.length());
        if (!BudgetKeys.BOT_ID.matcher(bot).matches()) {
            throw Settings.invalid("bot." + rest, bot, "a bot id matching " + BudgetKeys.BOT_ID.pattern());
        }
        return bot;
    }
}
