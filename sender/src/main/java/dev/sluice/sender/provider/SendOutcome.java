package dev.sluice.sender.provider;

import java.time.Duration;

/**
 * A provider answer, classified. Descriptions are the provider's text with any token redacted.
 */
public sealed interface SendOutcome {

    /** HTTP 200, {@code ok: true}: the provider accepted the message. */
    record Delivered(long providerMessageId) implements SendOutcome {
    }

    /**
     * HTTP 429: a schedule, not an error. Telegram's {@code parameters.retry_after} (seconds) says when
     * the scope may be called again; calls during the penalty can extend it.
     */
    record RetryAfter(Duration retryAfter, PenaltyScope scope, String description) implements SendOutcome {
    }

    /**
     * HTTP 403 ("Forbidden: bot was blocked by the user", "user is deactivated", ...): permanent for the
     * chat; costs the same budget as a delivered message.
     */
    record Blocked(int errorCode, String description) implements SendOutcome {
    }

    /** HTTP 400 with {@code parameters.migrate_to_chat_id}: a group became a supergroup with a new id. */
    record ChatMigrated(long newChatId, String description) implements SendOutcome {
    }

    /**
     * HTTP 401 Unauthorized (a revoked token), or 404 Not Found (Telegram's answer to a malformed token): the bot's
     * token, not this message, is refused. Every message of the bot would get the same answer, so the sender parks
     * the bot's lanes ({@code TokenRejections}) instead of failing its backlog message by message (issue 16, F10).
     */
    record TokenRejected(int errorCode, String description) implements SendOutcome {
    }

    /** Any other 4xx: sending again would fail again. */
    record PermanentFailure(int errorCode, String description) implements SendOutcome {
    }

    /**
     * 5xx or an I/O error: may succeed later (backoff). {@code errorCode} is null for I/O errors;
     * {@code maybeDelivered} is true for a read timeout after the request was written: the provider may have
     * accepted it, so a resend could duplicate it (UNCERTAIN unless the class's policy resends).
     */
    record TransientFailure(Integer errorCode, String description, boolean maybeDelivered) implements SendOutcome {
    }

    /** What a 429 penalises. Telegram does not say; the sender decides from context. */
    enum PenaltyScope { CHAT, BOT }
}
