package dev.sluice.sender.budget;

import static dev.sluice.sender.budget.LocalGcraBudget.BASE_PERIOD_MS;
import static dev.sluice.sender.budget.LocalGcraBudget.PPM;
import static dev.sluice.sender.budget.LocalGcraBudget.count;
import static dev.sluice.sender.budget.LocalGcraBudget.rate;

import dev.sluice.limits.GcraPolicy;
import dev.sluice.limits.Rate;

/**
 * One bot's state in a {@link LocalGcraBudget}: its policies (chat, group; the global one is built per decision at the
 * AIMD rate), the AIMD multiplier and its climb, the look-back of chat 429s, the arrival guard's numbering and floors,
 * the probe's gate and the unshared streak. Owned by its budget and touched only under that budget's monitor.
 */
final class LocalBot {
    private final BudgetConfig config;
    final BudgetLimits limits;
    final long globalCount;
    final GcraPolicy chat;
    final GcraPolicy group;
    long multiplierPpm = PPM;
    long climbFromMs;
    /** The latest-ending chat 429 of the look-back: its gate's end and when it was reported, epoch ms (0: none). */
    long recent429EndMs;
    long recent429AtMs;
    /** The arrival guard: the last grant's number and the floors (grant number → epoch ms) of later grants. */
    long grantSeq;
    /** The end of the bot gate that closed behind the last penalty probe, epoch ms (0: none): not probed again. */
    long probeGateEndMs;
    /** Unshared bot penalties in a row in this episode (the doublings of the next one), 0..MAX_DOUBLINGS. */
    int unsharedStreak;
    final java.util.TreeMap<Long, Long> floors = new java.util.TreeMap<>();

    LocalBot(BudgetLimits limits, BudgetConfig config) {
        this.config = config;
        this.limits = limits;
        this.globalCount = count(limits.globalRatePerS());
        this.chat = new GcraPolicy(rate(limits.chatRatePerS()), limits.chatBurst());
        // per minute, stretched by (60 s + margin) / 60 s: budget.group.arrival.margin.ms, as RedisGcraBudget decides
        this.group = new GcraPolicy(new Rate(count(limits.groupRatePerMin()),
                60 * BASE_PERIOD_MS + config.groupArrivalMargin().toMillis() * (BASE_PERIOD_MS / 1000)),
                limits.groupBurst());
    }

    /**
     * The TAT (scaled units of a policy of {@code count} per {@code periodMillis}) whose first grant comes at
     * {@code firstGrantAtMs} and no burst after it: + one interval per burst slot beyond the first, as the Redis drain
     * (GCRA grants while TAT - now <= (burst - 1) x interval; review: burst 10 waited 100 ms less without it).
     */
    static long drainedTat(long firstGrantAtMs, long count, long periodMillis, long burst) {
        return Math.addExact(Math.multiplyExact(firstGrantAtMs, count), Math.multiplyExact(burst - 1, periodMillis));
    }

    /**
     * A group's TAT {@code tat}, drained until one group interval after {@code sharedSentUntilMs} (the last instant a
     * shared grant may reach the provider; MIN_VALUE: none) while that is ahead of {@code now}: the provider counts a
     * group's calls in a sliding minute, shared ones included.
     */
    long groupTatAfter(long tat, long sharedSentUntilMs, long now) {
        Rate r = group.rate();
        long intervalMs = LocalGcraBudget.ceilDiv(r.periodMillis(), r.count());
        if (sharedSentUntilMs == Long.MIN_VALUE || sharedSentUntilMs + intervalMs <= now) {
            return tat; // nothing shared can share a minute with this group's next grant more closely than its rate
        }
        return Math.max(tat, drainedTat(sharedSentUntilMs + intervalMs, r.count(), r.periodMillis(), limits.groupBurst()));
    }

    long multiplier(long now) {
        if (multiplierPpm >= PPM || now <= climbFromMs) {
            return multiplierPpm;
        }
        long climbed = multiplierPpm + (long) Math.floor(config.aimdIncreasePerS() * PPM * (now - climbFromMs)
                / 1000d);
        return Math.min(PPM, climbed);
    }
}
