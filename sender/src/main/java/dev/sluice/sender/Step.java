package dev.sluice.sender;

/** What the scheduler does with a lane after one processing step of its head. */
public sealed interface Step {
    /** The head has its result: it leaves the lane, the next message of the chat becomes ready. */
    record Done() implements Step {
    }

    /** The head stays and the lane waits until {@code readyAtMs} (epoch ms): refusal, 429, backoff. */
    record RetryAt(long readyAtMs) implements Step {
    }

    Step DONE = new Done();
}
