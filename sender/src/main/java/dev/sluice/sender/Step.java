package dev.sluice.sender;

import java.util.Set;

/** What the scheduler does with a lane after one processing step of its head. */
public sealed interface Step {
    /** The head has its result: it leaves the lane, the next message of the chat becomes ready. */
    record Done() implements Step {
    }

    /** The head stays and the lane waits until {@code readyAtMs} (epoch ms): refusal, 429, backoff. */
    record RetryAt(long readyAtMs) implements Step {
    }

    /**
     * The head stays and the lane is parked until one of {@code botIds} has a free in-flight slot
     * ({@code sender.max.in.flight.per.bot}, {@link ParkedLanes}): the dispatcher wakes it when a call of one of them
     * ends, or at {@code latestMs} (epoch ms; {@link Long#MAX_VALUE} for none), when another bot of its pool admits again.
     */
    record WaitForBot(Set<String> botIds, long latestMs) implements Step {
        public WaitForBot {
            botIds = Set.copyOf(botIds);
        }

        public WaitForBot(Set<String> botIds) {
            this(botIds, Long.MAX_VALUE);
        }
    }

    Step DONE = new Done();
}
