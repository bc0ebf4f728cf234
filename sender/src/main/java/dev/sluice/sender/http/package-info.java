/**
 * Any HTTP provider sent to like a bot (issue 8): an SMS, payments or LLM API, a webhook receiver.
 *
 * <ul>
 * <li>{@link dev.sluice.sender.http.HttpProviderConfig}: {@code provider.<id>.*} keys, validated at start.</li>
 * <li>{@link dev.sluice.sender.http.HttpProviderTransport}: the JDK HTTP client; 429 read from
 *     {@code Retry-After} ({@link dev.sluice.sender.http.RetryAfterHeader}), a JSON field, or
 *     {@link dev.sluice.sender.http.FullJitterBackoff}; a 2xx failing the
 *     {@link dev.sluice.sender.http.ResponseCheck} is a soft limit (a throttle signal, never a delivery).</li>
 * <li>{@link dev.sluice.sender.budget.LimitKeyBudget}: the budget decides under the provider's limit key (the
 *     provider plus its API key or plan), shared by every process that spends that key.</li>
 * <li>{@link dev.sluice.sender.provider.RoutingTransport}: provider ids to HTTP, every other bot to Telegram.</li>
 * </ul>
 */
package dev.sluice.sender.http;
