package dev.sluice.metrics;

/** The class of a provider answer, a bounded tag for {@link SluiceMetrics#PROVIDER_REQUESTS}. */
public enum ProviderOutcome {
    /** HTTP 200. */
    OK,
    /** HTTP 429 with retry_after. */
    RATE_LIMITED,
    /** HTTP 403 (blocked by the user, user deactivated). */
    FORBIDDEN,
    /** Other 4xx. */
    CLIENT_ERROR,
    /** 5xx. */
    SERVER_ERROR,
    /** Connect error or read timeout. */
    NETWORK_ERROR
}
