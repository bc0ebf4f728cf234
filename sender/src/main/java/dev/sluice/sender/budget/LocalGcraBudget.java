package dev.sluice.sender.budget;

import dev.sluice.limits.GcraPolicy;
import dev.sluice.limits.Rate;
import dev.sluice.metrics.BudgetState;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The same decision as {@code budget.lua}, inside one process, on the pure-Java GCRA of module
 * {@code limits} ({@link GcraPolicy}): penalty gate, global GCRA and chat GCRA, all or nothing, waits
 * rounded up to whole milliseconds.
 *
 * <p>It only sees this process's traffic: N senders with a local budget each send up to N times the
 * bot's limit. That is the point of the demo's {@code --budget local} mode, and the reason the shared
 * {@link RedisGcraBudget} exists.
 */
public final class LocalGcraBudget implements BudgetPort {
    /** Idle entries are swept when the tables grow past this size, so memory stays bounded by activity. */
    private static final int SWEEP_THRESHOLD = 10_000;

    private final GcraPolicy global;
    private final GcraPolicy chat;
    private final Clock clock;
    /** Key (same names as in Redis) → TAT in the policy's scaled units. */
    private final Map<String, Long> tats = new HashMap<>();
    /** Gate key → epoch ms when the gate lifts. */
    private final Map<String, Long> gates = new HashMap<>();
    private int sweepAt = SWEEP_THRESHOLD;

    public LocalGcraBudget(BudgetLimits limits, Clock clock) {
        Objects.requireNonNull(limits, "limits");
        this.global = new GcraPolicy(rate(limits.globalRatePerS()), limits.globalBurst());
        this.chat = new GcraPolicy(rate(limits.chatRatePerS()), limits.chatBurst());
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    public LocalGcraBudget(BudgetLimits limits) {
        this(limits, Clock.systemUTC());
    }

    /** A rate per second as an exact {@link Rate} in thousandths, rounded down (never above the configured rate). */
    static Rate rate(double ratePerS) {
        return new Rate(Math.max(1, (long) Math.floor(ratePerS * 1000)), 1_000_000L);
    }

    @Override
    public BudgetState state() {
        return BudgetState.LOCAL;
    }

    @Override
    public synchronized Decision tryAcquire(BudgetRequest request) {
        String botId = request.botId();
        String chatId = request.chatId();
        long now = clock.millis();
        sweepIfLarge(now);
        Long botGate = gates.get(BudgetKeys.botGate(botId));
        if (botGate != null && botGate > now) {
            return Decision.refused(botGate - now, Limit.GATE_BOT);
        }
        Long gate = gates.get(BudgetKeys.chatGate(botId, chatId));
        if (gate != null && gate > now) {
            return Decision.refused(gate - now, Limit.GATE_CHAT);
        }
        String chatKey = BudgetKeys.chatTat(botId, chatId);
        String globalKey = BudgetKeys.globalTat(botId);
        GcraPolicy.Result c = chat.decide(tats.getOrDefault(chatKey, GcraPolicy.EMPTY_TAT), now);
        GcraPolicy.Result g = global.decide(tats.getOrDefault(globalKey, GcraPolicy.EMPTY_TAT), now);
        if (!c.decision().allowed() || !g.decision().allowed()) {
            long chatWait = c.decision().allowed() ? 0 : c.decision().waitMillis();
            long globalWait = g.decision().allowed() ? 0 : g.decision().waitMillis();
            return chatWait >= globalWait ? Decision.refused(chatWait, Limit.CHAT)
                    : Decision.refused(globalWait, Limit.GLOBAL);
        }
        tats.put(chatKey, c.tat());
        tats.put(globalKey, g.tat());
        return Decision.grant();
    }

    @Override
    public synchronized void penalize(String botId, PenaltyScope scope, String chatId, Duration penalty) {
        long until = clock.millis() + Math.max(1, penalty.toMillis());
        String key = scope == PenaltyScope.BOT ? BudgetKeys.botGate(botId) : BudgetKeys.chatGate(botId, chatId);
        gates.merge(key, until, Math::max);
    }

    private void sweepIfLarge(long now) {
        if (tats.size() + gates.size() < sweepAt) {
            return;
        }
        // An idle TAT (bucket full again) or a lifted gate is the same as a missing entry.
        tats.entrySet().removeIf(e -> policyOf(e.getKey()).millisUntilIdle(e.getValue(), now) == 0);
        gates.values().removeIf(until -> until <= now);
        sweepAt = Math.max(SWEEP_THRESHOLD, (tats.size() + gates.size()) * 2);
    }

    private GcraPolicy policyOf(String key) {
        return key.endsWith(":tat:global") ? global : chat;
    }

    @Override
    public void close() {
        // nothing to release
    }
}
