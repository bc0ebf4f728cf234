package dev.sluice.sender.telegram;

import dev.sluice.avro.OutboundMessage;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.sender.provider.Transport;
import java.time.Duration;
import java.util.Objects;

/**
 * Bounds the wait a provider asks for ({@code sender.retry.after.max.ms}, default 1 h): Telegram's
 * {@code parameters.retry_after} and an HTTP provider's {@code Retry-After} can say anything up to decades
 * (2,147,483,647 s), and that wait would become a lane parked for decades and a penalty gate in Redis that every
 * replica honours (issue 16, F5). A longer wait is cut to the cap: the lane asks again at the cap, and if the
 * provider still refuses, the next answer starts the next capped wait ("re-checks at the cap").
 *
 * <p>{@link #wrap} decorates any {@link Transport}: each {@link SendOutcome.RetryAfter} it returns carries at most
 * the cap, so the lane's wait, the penalty gate written to the budget and the bot-wide attribution all see the
 * bounded value. Budgets clamp a penalty to {@link #MAX_SETTING} on their own as well (callers outside the
 * sender, {@code BudgetClient}). Immutable and stateless: any thread.
 */
public final class RetryAfterCap {
    /** Default of {@code sender.retry.after.max.ms}. */
    public static final Duration DEFAULT = Duration.ofHours(1);
    /** The largest cap the setting accepts, and the bound every budget applies to a penalty gate itself. */
    public static final Duration MAX_SETTING = Duration.ofDays(1);

    private final Duration cap;

    public RetryAfterCap(Duration cap) {
        Objects.requireNonNull(cap, "cap");
        if (cap.isNegative() || cap.isZero() || cap.compareTo(MAX_SETTING) > 0) {
            throw new IllegalArgumentException("retry-after cap must be in (0, " + MAX_SETTING + "], was " + cap);
        }
        this.cap = cap;
    }

    public Duration cap() {
        return cap;
    }

    /** {@code wait} bounded by the cap (null stays null). */
    public Duration bound(Duration wait) {
        return wait == null || wait.compareTo(cap) <= 0 ? wait : cap;
    }

    /** The outcome with its {@code retry_after} bounded; any other outcome as it is. */
    public SendOutcome apply(SendOutcome outcome) {
        if (outcome instanceof SendOutcome.RetryAfter r && r.retryAfter() != null && r.retryAfter().compareTo(cap) > 0) {
            return new SendOutcome.RetryAfter(cap, r.scope(), r.description() + " (retry_after "
                    + r.retryAfter().toSeconds() + " s capped at " + cap.toMillis() + " ms by sender.retry.after.max.ms)");
        }
        return outcome;
    }

    /** A penalty bounded by {@link #MAX_SETTING}, at least 1 ms (the budgets' own clamp). */
    public static Duration clampPenalty(Duration penalty) {
        if (penalty == null || penalty.compareTo(MAX_SETTING) > 0) {
            return MAX_SETTING;
        }
        return penalty.toMillis() < 1 ? Duration.ofMillis(1) : penalty;
    }

    /** {@code transport} with every {@link SendOutcome.RetryAfter} it answers bounded by {@code cap}. */
    public static Transport wrap(Transport transport, Duration cap) {
        Objects.requireNonNull(transport, "transport");
        RetryAfterCap bound = new RetryAfterCap(cap);
        return new Transport() {
            @Override
            public SendOutcome send(String botId, String chatId, String text, String parseMode) {
                return bound.apply(transport.send(botId, chatId, text, parseMode));
            }

            @Override
            public SendOutcome send(String botId, String chatId, OutboundMessage message) {
                return bound.apply(transport.send(botId, chatId, message));
            }

            @Override
            public void close() {
                transport.close();
            }

            @Override
            public String toString() {
                return transport + " (retry_after capped at " + bound.cap.toMillis() + " ms)";
            }
        };
    }
}
