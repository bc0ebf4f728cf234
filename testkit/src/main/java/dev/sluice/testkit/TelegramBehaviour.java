package dev.sluice.testkit;

import java.time.Duration;

/**
 * An answer FakeTelegram gives instead of its normal behaviour, queued from a test for a chat or a
 * whole bot with {@link FakeTelegram#enqueueForChat} / {@link FakeTelegram#enqueueForBot}. Each queued
 * behaviour answers one request (or {@code times} requests), then the fake behaves normally again.
 * Answers follow what the real Bot API returns (status code, {@code description}, {@code parameters}).
 * A queued behaviour is answered before the rate limits are consulted and spends no budget, except
 * {@link AcceptThenStall} and {@link AcceptThenDrop}, which go through the limits like a normal send. The most specific queue
 * wins: bot and chat, then chat (any bot), then bot (any chat).
 */
public sealed interface TelegramBehaviour {

    /**
     * 429 {@code Too Many Requests: retry after N} with {@code parameters.retry_after = N}; it also opens a
     * penalty of N seconds for the scope it was queued for (chat/group, or the whole bot), and every
     * call during that penalty is refused and extends it, as Telegram does.
     */
    record TooManyRequests(Duration retryAfter) implements TelegramBehaviour {
        public TooManyRequests {
            if (retryAfter == null || retryAfter.toSeconds() < 1) {
                throw new IllegalArgumentException("retryAfter: must be at least 1 s, was " + retryAfter);
            }
        }
    }

    /** 403 {@code Forbidden: bot was blocked by the user} for this one request (see also {@link FakeTelegram#blockChat}). */
    record Blocked() implements TelegramBehaviour {
    }

    /** 403 {@code Forbidden: user is deactivated} for this one request (see also {@link FakeTelegram#deactivateChat}). */
    record Deactivated() implements TelegramBehaviour {
    }

    /** 400 {@code Bad Request: chat not found}. */
    record ChatNotFound() implements TelegramBehaviour {
    }

    /**
     * 400 {@code Bad Request: group chat was upgraded to a supergroup chat} with
     * {@code parameters.migrate_to_chat_id = newChatId} (a group that became a supergroup).
     */
    record MigrateToChat(long newChatId) implements TelegramBehaviour {
    }

    /** A server error: {@code status} 500..599 with Telegram's {@code {"ok":false,...}} body. */
    record ServerError(int status) implements TelegramBehaviour {
        public ServerError {
            if (status < 500 || status > 599) {
                throw new IllegalArgumentException("status: must be 5xx, was " + status);
            }
        }
    }

    /**
     * The server reads the request and closes the connection without any response (the client sees
     * an end of stream / connection reset). Nothing is accepted.
     */
    record DropConnection() implements TelegramBehaviour {
    }

    /**
     * The message goes through the normal limits and, if accepted, is recorded as delivered; the
     * response is then held back for {@code stall} (longer than the client's read timeout), so the
     * client cannot know the message was delivered. Holds one server thread while stalling.
     */
    record AcceptThenStall(Duration stall) implements TelegramBehaviour {
        public AcceptThenStall {
            if (stall == null || stall.isNegative() || stall.isZero()) {
                throw new IllegalArgumentException("stall: must be positive, was " + stall);
            }
        }
    }

    /**
     * The message goes through the normal limits and, if accepted, is recorded as delivered; then the connection is
     * closed without any response (a load balancer or a network dropping the answer): the client sees an end of stream
     * after its request, and cannot know the message was delivered.
     */
    record AcceptThenDrop() implements TelegramBehaviour {
    }

    static TelegramBehaviour tooManyRequests(Duration retryAfter) {
        return new TooManyRequests(retryAfter);
    }

    static TelegramBehaviour blocked() {
        return new Blocked();
    }

    static TelegramBehaviour deactivated() {
        return new Deactivated();
    }

    static TelegramBehaviour chatNotFound() {
        return new ChatNotFound();
    }

    static TelegramBehaviour migrateTo(long newChatId) {
        return new MigrateToChat(newChatId);
    }

    static TelegramBehaviour serverError(int status) {
        return new ServerError(status);
    }

    static TelegramBehaviour dropConnection() {
        return new DropConnection();
    }

    static TelegramBehaviour acceptThenStall(Duration stall) {
        return new AcceptThenStall(stall);
    }

    static TelegramBehaviour acceptThenDrop() {
        return new AcceptThenDrop();
    }
}
