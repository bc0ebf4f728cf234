/**
 * Sluice sender (DESIGN.md, Sender; issue 9): a scheduler, not a retry loop. One class per job; each class's
 * Javadoc says which thread owns its state. Read bottom-up: lanes, then delivery, then dispatch, then Kafka,
 * then the service.
 *
 * <ul>
 * <li>{@link dev.sluice.sender.SenderService}: lifecycle and threads only: start, close, health; the poll,
 *     dispatch, sending and status threads.</li>
 * <li>{@link dev.sluice.sender.SenderWiring}: config to parts: the {@link dev.sluice.sender.SenderPorts} (serdes,
 *     the budget assembled once through {@code BudgetStack}, transports, sent marks), the Kafka clients
 *     ({@link dev.sluice.sender.KafkaClientProps}), the result sink, the processor, the lanes, the meters.</li>
 * <li>{@link dev.sluice.sender.OutboxPoller} (poll thread): the Kafka consumer: poll, buffer records in lanes,
 *     per-bot deferral ({@link dev.sluice.sender.DeferredRecords}) and partition pauses
 *     ({@link dev.sluice.sender.PartitionPauses}), unreadable records
 *     ({@link dev.sluice.sender.UnreadableRecords}), offsets committed only up to the lowest message without a
 *     result ({@link dev.sluice.sender.OffsetTracker}), rebalances.</li>
 * <li>{@link dev.sluice.sender.Lanes}: the one lock over the per-chat lanes
 *     ({@link dev.sluice.sender.LaneScheduler}), in-flight counts and the backlog per bot.</li>
 * <li>{@link dev.sluice.sender.Dispatcher} (dispatch thread): hands ready lane heads to the sending threads in
 *     per-bot batches and settles their {@link dev.sluice.sender.Step}; lanes waiting for a bot slot wait in
 *     {@link dev.sluice.sender.ParkedLanes} until a slot of their bot is released or their time limit.</li>
 * <li>{@link dev.sluice.sender.DeliveryProcessor} (sending threads): one step of a lane's head — deadline,
 *     idempotency key ({@link dev.sluice.sender.idempotency.SentMarks}), bot choice (pools), budget decision,
 *     provider call, classified outcome, one {@code DeliveryResult} per message
 *     ({@link dev.sluice.sender.KafkaResultSink}). Never sleeps. It orchestrates: {@code Admission} (the checks
 *     before a budget call, returning a sealed {@code Prepared}), {@code LanePacer} (when a lane asks),
 *     {@code Refusals} (a refusal → the wait and the pacer's schedule), {@code PoolDelivery} ({@code bot_pool}
 *     messages), {@code ProviderCall} (the call and its {@link dev.sluice.sender.provider.SendOutcome}),
 *     {@code Outcomes} (the {@code DeliveryResult}, sent-mark replay) and {@code DeliveryPolicy} (the retry,
 *     backoff, reschedule and reservation numbers).</li>
 * <li>{@link dev.sluice.sender.StatusPublisher} (status thread): per-bot reports to {@code sender.status}.</li>
 * <li>{@link dev.sluice.sender.RateLimitAttribution}: Telegram's 429 does not name its scope; several chats of
 *     one bot refused together mean the whole bot (else group or chat), so a bot-wide penalty is waited out by
 *     every lane instead of being extended by each of them.</li>
 * <li>{@link dev.sluice.sender.BotPacer}, {@code BotSlots}, {@code ProviderBreakers}: when lanes ask the
 *     budget, how many calls a bot has in flight, and a circuit breaker per bot over provider outages.</li>
 * <li>Issue 16: {@link dev.sluice.sender.ChatRegistry} (403 marks per (bot, chat), dated by {@code due_at}, and
 *     migrations), {@link dev.sluice.sender.TokenRejections} (a bot whose token the provider rejects is parked and
 *     re-checked, never failed message by message), {@code PoolRanking} (a pool asks its least-loaded bot first) and
 *     {@link dev.sluice.sender.telegram.RetryAfterCap} ({@code sender.retry.after.max.ms} bounds every provider
 *     wait).</li>
 * </ul>
 */
package dev.sluice.sender;
