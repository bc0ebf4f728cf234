/**
 * Sluice sender (DESIGN.md, Sender; issue 9): a scheduler, not a retry loop.
 *
 * <ul>
 * <li>{@link dev.sluice.sender.SenderService}: the Kafka consumer, per-chat lanes
 *     ({@link dev.sluice.sender.LaneScheduler}), bounded buffer with pause/resume, offsets committed only up
 *     to the lowest message without a result, one {@code DeliveryResult} per message, per-bot reports to
 *     {@code sender.status}.</li>
 * <li>{@link dev.sluice.sender.DeliveryProcessor}: one step of a lane's head — deadline, idempotency key
 *     ({@link dev.sluice.sender.idempotency.SentMarks}), bot choice (pools), budget decision, provider call,
 *     classified outcome. Never sleeps.</li>
 * <li>{@link dev.sluice.sender.RateLimitAttribution}: Telegram's 429 does not name its scope; several chats of
 *     one bot refused together mean the whole bot (else group or chat), so a bot-wide penalty is waited out by
 *     every lane instead of being extended by each of them.</li>
 * <li>{@link dev.sluice.sender.BotPacer}, {@code BotSlots}, {@code ProviderBreakers}: when lanes ask the
 *     budget, how many calls a bot has in flight, and a circuit breaker per bot over provider outages.</li>
 * </ul>
 */
package dev.sluice.sender;
