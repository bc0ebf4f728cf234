package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The kind a provider fault's log line names, from the transports' transient failures. */
class ProviderFaultsTest {

    @Test
    void kinds_are_the_http_code_a_connection_error_or_a_timeout() {
        assertThat(ProviderFaults.kind(502, "Bad Gateway", false)).isEqualTo("HTTP 502");
        assertThat(ProviderFaults.kind(null, "ConnectException: Failed to connect to /127.0.0.1:9", false))
                .isEqualTo("connection error");
        assertThat(ProviderFaults.kind(null, "SocketTimeoutException: connect timed out", false))
                .isEqualTo("connect timeout");
        assertThat(ProviderFaults.kind(null, "HttpConnectTimeoutException calling provider p: HTTP connect timed out",
                false)).isEqualTo("connect timeout");
        assertThat(ProviderFaults.kind(null, "SocketTimeoutException: timeout", true)).isEqualTo("timeout");
        assertThat(ProviderFaults.kind(null, "empty response from the Bot API", true)).isEqualTo("no answer");
        assertThat(ProviderFaults.kind(null, "IOException: unexpected end of stream", false))
                .isEqualTo("connection error");
    }
}
