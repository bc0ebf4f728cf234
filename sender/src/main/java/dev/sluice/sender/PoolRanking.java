package dev.sluice.sender;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * The order in which a pool message ({@code bot_pool}) asks its bots (issue 16): least loaded first, so a pool
 * spreads its chats over its bots instead of filling the producer's first bot up to its limit. Fewest provider
 * calls in flight in this instance first ({@link BotSlots}); then most headroom, read as the earliest free attempt
 * slot of the bot's pacer ({@link BotPacer}: a bot whose schedule runs further ahead has less of its rate left);
 * ties keep the pool's own order. The shared budget still decides each send; the ranking only decides whom to ask
 * first. Stateless and pure: the loads are read by the caller's thread at the time of the call.
 */
final class PoolRanking {
    private PoolRanking() {
    }

    /**
     * @param bots         the pool's configured bots, in the pool's order
     * @param inFlight     provider calls in flight per bot
     * @param nextFreeAtMs the bot's next free attempt slot (epoch ms); earlier is more headroom
     * @return the same bots, least loaded first (a stable order)
     */
    static List<String> rank(List<String> bots, ToIntFunction<String> inFlight, ToLongFunction<String> nextFreeAtMs) {
        if (bots.size() < 2) {
            return bots;
        }
        record Load(String bot, int inFlight, long nextFreeAtMs) {
        }
        List<Load> loads = new ArrayList<>(bots.size());
        for (String bot : bots) {
            loads.add(new Load(bot, inFlight.applyAsInt(bot), nextFreeAtMs.applyAsLong(bot)));
        }
        loads.sort(Comparator.comparingInt(Load::inFlight).thenComparingLong(Load::nextFreeAtMs)); // stable
        List<String> out = new ArrayList<>(loads.size());
        loads.forEach(l -> out.add(l.bot()));
        return out;
    }
}
