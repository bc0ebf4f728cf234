package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.SlidingWindows;
import dev.sluice.testkit.TelegramLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: the budget's grants against Telegram's limits as FakeTelegram applies them ({@link TelegramLimiter}: 20 per
 * group in any sliding 60 s, 1/s per chat with burst 3), when some calls ARRIVE later after their grant than others.
 * The real in-process budget on a manual clock grants as a greedy sender asks (each refusal waited out exactly); call k
 * reaches the provider at its grant + delay(k). Deterministic: no real time, no luck.
 */
class ArrivalJitterTest {
    private static final String BOT = "bot";

    /** What the provider made of the calls: refusals (429s) and the most accepted in any sliding window. */
    record Outcome(int refused, List<TelegramLimiter.Scope> scopes, int maxGroupIn60s) {
    }

    /**
     * {@code calls} calls to {@code chat}, asked for as soon as the budget allows; the first {@code lateCalls} of them
     * arrive {@code delayMs} after their grant, the others at their grant.
     */
    static Outcome run(BudgetConfig config, String chat, int calls, int lateCalls, long delayMs) {
        return run(config, FakeTelegramLimits.telegram(), List.of(chat), calls, lateCalls, delayMs, 60_000);
    }

    /**
     * As above against {@code provider}'s limits, call k to {@code chats[k % n]}; the window of the most accepted is
     * {@code windowMs}.
     */
    static Outcome run(BudgetConfig config, FakeTelegramLimits provider, List<String> chats, int calls, int lateCalls,
                       long delayMs, long windowMs) {
        ManualClock clock = new ManualClock();
        LocalGcraBudget budget = new LocalGcraBudget(config, clock);
        List<long[]> arrivals = new ArrayList<>(); // {arrival ms, call index}
        for (int k = 0; k < calls; ) {
            Decision d = budget.tryAcquire(BOT, chats.get(k % chats.size()));
            if (d.granted()) {
                arrivals.add(new long[] {clock.millis() + (k < lateCalls ? delayMs : 0), k});
                k++;
            } else {
                clock.advance(d.retryIn());
            }
        }
        arrivals.sort(Comparator.<long[]>comparingLong(a -> a[0]).thenComparingLong(a -> a[1]));
        TelegramLimiter telegram = new TelegramLimiter(provider);
        List<TelegramLimiter.Scope> scopes = new ArrayList<>();
        List<Long> accepted = new ArrayList<>();
        for (long[] a : arrivals) {
            TelegramLimiter.Decision d = telegram.tryAcquire(BOT, chats.get((int) (a[1] % chats.size())), a[0]);
            if (d.accepted()) {
                accepted.add(a[0]);
            } else {
                scopes.add(d.scope());
            }
        }
        return new Outcome(scopes.size(), scopes, SlidingWindows.maxPerWindow(accepted, windowMs));
    }

    @Test
    void a_group_call_arriving_5_ms_late_does_not_make_21_arrivals_in_telegrams_minute() {
        // 41 calls to one group with the default limits (20/min, burst 1): the first call arrives 5 ms after its grant,
        // the 21st grant (a minute after the first) at once; today they share a sliding minute with the 19 between them
        Outcome o = run(BudgetConfig.of(BudgetLimits.telegramDefaults()), "-1009020", 41, 1, 5);
        assertThat(o.refused()).as("429s, by scope %s", o.scopes()).isZero();
        assertThat(o.maxGroupIn60s()).isLessThanOrEqualTo(20);
    }

    @Test
    void the_group_absorbs_arrival_jitter_up_to_its_margin_and_no_more() {
        long margin = BudgetConfigKeys.DEFAULT_GROUP_ARRIVAL_MARGIN_MS;
        BudgetConfig defaults = BudgetConfig.of(BudgetLimits.telegramDefaults());
        assertThat(defaults.groupArrivalMargin().toMillis()).isEqualTo(margin);
        // the first 20 calls arrive `margin` ms after their grants, the 20 after them at their grants
        Outcome within = run(defaults, "-1009020", 41, 20, margin);
        assertThat(within.refused()).as("429s, by scope %s", within.scopes()).isZero();
        assertThat(within.maxGroupIn60s()).isEqualTo(20);
        // 1 ms more than the margin: the 21st call shares a sliding minute with the 20 before it (the bound is exact)
        Outcome beyond = run(defaults, "-1009020", 41, 20, margin + 1);
        assertThat(beyond.scopes()).as("one 429 per call 20 grants after a late one").isNotEmpty()
                .containsOnly(TelegramLimiter.Scope.GROUP);
        // with the margin set to 0 the group grants at exactly 20/min: even 1 ms of jitter costs a 429
        BudgetConfig noMargin = BudgetConfig.builder(BudgetLimits.telegramDefaults()).groupArrivalMargin(Duration.ZERO).build();
        assertThat(run(noMargin, "-1009020", 41, 1, 1).scopes()).containsExactly(TelegramLimiter.Scope.GROUP);
        assertThat(run(noMargin, "-1009020", 41, 0, 0).refused()).as("without jitter").isZero();
    }

    @Test
    void the_margin_costs_margin_over_a_minute_of_a_saturated_groups_throughput() {
        ManualClock clock = new ManualClock();
        LocalGcraBudget budget = new LocalGcraBudget(BudgetConfig.of(BudgetLimits.telegramDefaults()), clock);
        long start = clock.millis();
        int granted = 0;
        while (granted < 41) {
            Decision d = budget.tryAcquire(BOT, "-1009020");
            if (d.granted()) {
                granted++;
            } else {
                clock.advance(d.retryIn());
            }
        }
        // 41 grants: 40 intervals of 3000 x (60000 + margin) / 60000 ms (3150 at the default 3000)
        long margin = BudgetConfigKeys.DEFAULT_GROUP_ARRIVAL_MARGIN_MS;
        assertThat(clock.millis() - start).isEqualTo(40 * (3000 + margin / 20));
    }

    @Test
    void a_private_chat_needs_no_margin_its_burst_one_below_telegrams_absorbs_a_second_of_jitter() {
        // default chat limit 1/s burst 2, Telegram's (FakeTelegram's) 1/s burst 3: the first three calls (the burst of 2
        // and the next) arrive late, the ones after them at their grants
        BudgetConfig defaults = BudgetConfig.of(BudgetLimits.telegramDefaults());
        Outcome within = run(defaults, "4242", 12, 3, 1000);
        assertThat(within.refused()).as("429s, by scope %s", within.scopes()).isZero();
        Outcome beyond = run(defaults, "4242", 12, 3, 1001);
        assertThat(beyond.scopes()).as("beyond one chat interval").containsExactly(TelegramLimiter.Scope.CHAT);
        // at Telegram's own burst 3 there is no slack left: 1 ms of jitter is a 429
        BudgetConfig burst3 = BudgetConfig.of(new BudgetLimits(30, 1, 1, 3));
        assertThat(run(burst3, "4242", 12, 4, 1).scopes()).containsExactly(TelegramLimiter.Scope.CHAT);
    }

    @Test
    void a_bot_absorbs_arrival_jitter_up_to_its_global_margin_and_no_more() {
        // a bot configured at its provider's limit, 21/s (a rate whose granted interval is whole ms: 21 x 1000 / 1050 =
        // 20/s, 50 ms apart; this budget's waits are whole ms), read from settings as a sender reads it: the default
        // margin (50 ms). 43 calls over 43 chats (no chat limit in play), the first 21 late, the rest at their grants.
        long margin = BudgetConfigKeys.DEFAULT_GLOBAL_ARRIVAL_MARGIN_MS;
        FakeTelegramLimits provider = FakeTelegramLimits.telegram().withGlobalPerSecond(21);
        BudgetConfig defaults = BudgetConfig.from(dev.sluice.config.Settings.of(java.util.Map.of("budget.global.rate.per.s", "21")));
        assertThat(defaults.globalArrivalMargin().toMillis()).isEqualTo(margin);
        assertThat(defaults.limitsFor("bot").globalRatePerS()).isEqualTo(20);
        List<String> chats = new ArrayList<>();
        for (int i = 0; i < 43; i++) {
            chats.add(Integer.toString(5000 + i));
        }
        Outcome within = run(defaults, provider, chats, 43, 21, margin, 1000);
        assertThat(within.refused()).as("429s, by scope %s", within.scopes()).isZero();
        assertThat(within.maxGroupIn60s()).as("most calls accepted in a sliding second").isEqualTo(21);
        // 1 ms more than the margin: the 22nd call shares a sliding second with the 21 before it (the bound is exact)
        Outcome beyond = run(defaults, provider, chats, 43, 21, margin + 1, 1000);
        assertThat(beyond.scopes()).as("a call 21 grants after a late one").isNotEmpty()
                .containsOnly(TelegramLimiter.Scope.BOT);
        // at exactly the provider's limit (margin 0, as a budget built in code grants; 20/s, 50 ms apart): 1 ms of
        // jitter is a 429
        BudgetConfig exact = BudgetConfig.from(dev.sluice.config.Settings.of(java.util.Map.of("budget.global.rate.per.s",
                "20", "budget.global.arrival.margin.ms", "0")));
        FakeTelegramLimits at20 = FakeTelegramLimits.telegram().withGlobalPerSecond(20);
        assertThat(run(exact, at20, chats, 43, 1, 1, 1000).scopes()).as("the 21st call, then the bot-wide penalty it opened")
                .isNotEmpty().containsOnly(TelegramLimiter.Scope.BOT);
        assertThat(run(exact, at20, chats, 43, 0, 0, 1000).refused()).as("without jitter").isZero();
    }
}
