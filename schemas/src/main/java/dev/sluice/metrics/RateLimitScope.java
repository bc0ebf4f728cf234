package dev.sluice.metrics;

/**
 * Which provider limit a 429 is attributed to (Telegram Bot API FAQ: about 30 msg/s per bot overall,
 * about 1 msg/s per chat, 20 msg/min per group). Telegram's 429 does not name the limit; the sender
 * attributes it by the chat: negative chat ids are groups, otherwise the chat limit when the chat was
 * sent to within the last second, else global.
 */
public enum RateLimitScope {
    GLOBAL, GROUP, CHAT
}
