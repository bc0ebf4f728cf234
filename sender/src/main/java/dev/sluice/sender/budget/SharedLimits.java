package dev.sluice.sender.budget;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one sender decides a bot's budget with, as the text every sender sharing a Redis publishes for the bot
 * ({@link SharedLimitsCheck}): the limits as configured ({@link BudgetConfig#configuredLimitsFor}: a per-bot rate, paid
 * broadcast or a provider's limits applied, named after the default keys), the arrival guard's N, the margins, the backfill headroom, the AIMD
 * parameters, the outage mode and {@code budget.max.replicas} (the share each sender takes in local fallback) and the
 * hash of the budget script's code. Every budget call carries the asking sender's limits, so two senders that
 * disagree on any of these move the same TATs with different intervals (or, while Redis is out, take other shares of
 * the bot's rate): the bot's real limit is then neither configuration. Immutable.
 *
 * <p>Text form: {@code key=value;key=value}, keys named after the config keys they come from (values are numbers, the
 * outage mode as configured and a hex hash: no {@code ;}, {@code =} or {@code |}, and nothing secret).
 */
public record SharedLimits(Map<String, String> values) {
    /**
     * The hash of what the budget script does ({@link LuaCode}: without comments and layout): another budget.lua
     * decides differently with the same numbers (a rolling upgrade). Not the SHA-1 EVALSHA names ({@link
     * BudgetScript#SHA1}): an upgrade that only edits comments would disagree for its whole rollout.
     */
    static final String SCRIPT = "script.code.sha1"; // not a config key: the budget script's code hash
    /** {@link #SCRIPT}'s value for this process's budget.lua, computed once. */
    private static final String SCRIPT_CODE_HASH = scriptHash(BudgetScript.TEXT);

    public SharedLimits {
        values = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(values, "values")));
    }

    /** The limits {@code config} decides {@code botId} with. */
    public static SharedLimits of(BudgetConfig config, String botId) {
        return ofHash(config, botId, SCRIPT_CODE_HASH);
    }

    /** The same, with {@code scriptText} as the budget script (a test's other budget.lua). */
    static SharedLimits of(BudgetConfig config, String botId, String scriptText) {
        return ofHash(config, botId, scriptHash(scriptText));
    }

    private static SharedLimits ofHash(BudgetConfig config, String botId, String scriptCodeHash) {
        BudgetLimits l = config.configuredLimitsFor(botId);
        Map<String, String> v = new LinkedHashMap<>();
        v.put(rateKey(config, botId), number(l.globalRatePerS()));
        v.put(BudgetConfigKeys.GLOBAL_BURST.name(), Integer.toString(l.globalBurst()));
        v.put(BudgetConfigKeys.CHAT_RATE.name(), number(l.chatRatePerS()));
        v.put(BudgetConfigKeys.CHAT_BURST.name(), Integer.toString(l.chatBurst()));
        v.put(BudgetConfigKeys.GROUP_RATE.name(), number(l.groupRatePerMin()));
        v.put(BudgetConfigKeys.GROUP_BURST.name(), Integer.toString(l.groupBurst()));
        v.put(BudgetConfigKeys.ARRIVAL_GUARD_LIMIT.name(), Integer.toString(config.arrivalGuardLimitPerS()));
        v.put(BudgetConfigKeys.GROUP_ARRIVAL_MARGIN_MS.name(), Long.toString(config.groupArrivalMargin().toMillis()));
        v.put(BudgetConfigKeys.GLOBAL_ARRIVAL_MARGIN_MS.name(), Long.toString(config.globalArrivalMargin().toMillis()));
        v.put(BudgetConfigKeys.BACKFILL_HEADROOM.name(), number(config.backfillHeadroom()));
        v.put(BudgetConfigKeys.AIMD_DECREASE.name(), number(config.aimdDecreaseFactor()));
        v.put(BudgetConfigKeys.AIMD_INCREASE.name(), number(config.aimdIncreasePerS()));
        v.put(BudgetConfigKeys.AIMD_FLOOR.name(), number(config.aimdFloor()));
        // while Redis cannot decide: local-fallback decides at the global rate / budget.max.replicas, fail-closed not at all
        v.put(BudgetConfigKeys.MAX_REPLICAS.name(), Integer.toString(config.maxReplicas()));
        v.put(BudgetConfigKeys.OUTAGE_MODE.name(),
                config.outageMode().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        v.put(SCRIPT, scriptCodeHash);
        return new SharedLimits(v);
    }

    /** {@link #SCRIPT}'s value for {@code scriptText}: the SHA-1 of its code, 12 hex digits. */
    static String scriptHash(String scriptText) {
        return BudgetScript.sha1(LuaCode.of(scriptText)).substring(0, 12);
    }

    /**
     * The key that sets the bot's global rate, by the precedence of {@link BudgetConfig#configuredLimitsFor}: a provider's
     * limits, paid broadcast, a per-bot rate, the default. Compared by value whichever key set it ({@link #differences}).
     */
    static String rateKey(BudgetConfig config, String botId) {
        if (config.botLimits().containsKey(botId)) {
            return "provider." + botId + ".rate.per.s";
        }
        if (config.paidBroadcastBots().contains(botId)) {
            return BudgetConfigKeys.PAID_RATE.name();
        }
        if (config.botRates().containsKey(botId)) {
            return "bot." + botId + BudgetConfigKeys.BOT_RATE_SUFFIX;
        }
        return BudgetConfigKeys.GLOBAL_RATE.name();
    }

    /** Reads the text form; a pair without {@code =} is kept under its whole text with an empty value. */
    public static SharedLimits parse(String text) {
        Map<String, String> v = new LinkedHashMap<>();
        for (String pair : text.split(";")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            v.put(eq < 0 ? pair : pair.substring(0, eq), eq < 0 ? "" : pair.substring(eq + 1));
        }
        return new SharedLimits(v);
    }

    /** The text form. */
    public String text() {
        StringBuilder b = new StringBuilder();
        values.forEach((k, val) -> b.append(b.length() == 0 ? "" : ";").append(k).append('=').append(val));
        return b.toString();
    }

    /** Whether {@code key} is one {@link #rateKey} names: the bot's global rate, set by that key. */
    static boolean isRateKey(String key) {
        return key.equals(BudgetConfigKeys.GLOBAL_RATE.name()) || key.equals(BudgetConfigKeys.PAID_RATE.name())
                || (key.startsWith("bot.") || key.startsWith("provider."))
                && key.endsWith(BudgetConfigKeys.BOT_RATE_SUFFIX);
    }

    /** The key setting the bot's global rate and the rate, or null (a text without one). */
    private Map.Entry<String, String> rate() {
        return values.entrySet().stream().filter(e -> isRateKey(e.getKey())).findFirst().orElse(null);
    }

    /**
     * Each key whose value differs, as {@code key=<mine> here, <theirs> at <who>}, in this object's key order and then
     * the keys only {@code other} has ({@code -} for a key one side lacks: another version of Sluice). The bot's global
     * rate is compared by value, whichever key each side set it with (a per-bot rate of 30 is the default's 30); when the
     * values differ and the keys do too, both are named: {@code bot.x.rate.per.s=20 here, budget.global.rate.per.s=30 at
     * <who>}.
     */
    public List<String> differences(SharedLimits other, String who) {
        List<String> out = new ArrayList<>();
        Map.Entry<String, String> theirRate = other.rate();
        values.forEach((k, mine) -> {
            if (isRateKey(k)) {
                if (theirRate == null) {
                    out.add(k + "=" + mine + " here, - at " + who);
                } else if (!mine.equals(theirRate.getValue())) {
                    out.add(k + "=" + mine + " here, " + (k.equals(theirRate.getKey()) ? "" : theirRate.getKey() + "=")
                            + theirRate.getValue() + " at " + who);
                }
                return;
            }
            String theirs = other.values.getOrDefault(k, "-");
            if (!mine.equals(theirs)) {
                out.add(k + "=" + mine + " here, " + theirs + " at " + who);
            }
        });
        boolean myRate = rate() != null;
        other.values.forEach((k, theirs) -> {
            if (isRateKey(k) ? !myRate : !values.containsKey(k)) {
                out.add(k + "=- here, " + theirs + " at " + who);
            }
        });
        return out;
    }

    /** A double without a trailing {@code .0} or exponent, so 30 and 30.0 compare equal and read as typed. */
    static String number(double d) {
        return BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
    }
}
