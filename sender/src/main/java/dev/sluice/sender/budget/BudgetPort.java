package dev.sluice.sender.budget;

import java.time.Duration;

/**
 * The shared provider budget of a bot (DESIGN.md, Budget). One call decides atomically the penalty gate
 * of the chat, the bot's global GCRA and the chat's GCRA, and consumes budget from both or from neither.
 *
 * <p>Implementations: {@link RedisGcraBudget} (shared by every sender replica; the production mode) and
 * {@link LocalGcraBudget} (in-process; each process sees only its own traffic). Both are thread-safe.
 */
public interface BudgetPort extends AutoCloseable {

    /**
     * Asks for budget to send one message from {@code botId} to {@code chatId}.
     *
     * @return granted (budget consumed), or refused with the wait (rounded up to ms) and the limit
     * @throws BudgetUnavailableException when the budget store cannot be reached (retriable)
     */
    Decision tryAcquire(String botId, String chatId);

    /**
     * Writes a penalty gate for a chat after a 429 with {@code retry_after}: the chat is refused with
     * {@link Limit#GATE} until {@code penalty} has passed. An existing longer gate is kept.
     *
     * @throws BudgetUnavailableException when the budget store cannot be reached (retriable)
     */
    void penalizeChat(String botId, String chatId, Duration penalty);

    @Override
    void close();
}
