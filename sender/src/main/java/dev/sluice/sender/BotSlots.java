package dev.sluice.sender;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * At most {@code sender.max.in.flight.per.bot} provider calls in flight per bot token in this instance.
 * A lane that finds its bot full is parked ({@link ParkedLanes}, no polling) and woken by {@link #release},
 * which calls the listener ({@link Dispatcher#slotReleased}) with the bot id after the permit is back. Thread-safe.
 */
final class BotSlots {
    private final int maxPerBot;
    private final Map<String, Integer> inFlight = new HashMap<>();
    private volatile Consumer<String> onRelease = bot -> { };

    BotSlots(int maxPerBot) {
        if (maxPerBot < 1) {
            throw new IllegalArgumentException("maxPerBot must be at least 1, was " + maxPerBot);
        }
        this.maxPerBot = maxPerBot;
    }

    void onRelease(Consumer<String> listener) {
        this.onRelease = Objects.requireNonNull(listener);
    }

    synchronized boolean tryAcquire(String botId) {
        int n = inFlight.getOrDefault(botId, 0);
        if (n >= maxPerBot) {
            return false;
        }
        inFlight.put(botId, n + 1);
        return true;
    }

    synchronized boolean hasRoom(String botId) {
        return inFlight.getOrDefault(botId, 0) < maxPerBot;
    }

    synchronized int inFlight(String botId) {
        return inFlight.getOrDefault(botId, 0);
    }

    void release(String botId) {
        synchronized (this) {
            int n = inFlight.getOrDefault(botId, 0) - 1;
            if (n <= 0) {
                inFlight.remove(botId);
            } else {
                inFlight.put(botId, n);
            }
        }
        onRelease.accept(botId); // outside the monitor: the listener takes the Lanes lock
    }
}
