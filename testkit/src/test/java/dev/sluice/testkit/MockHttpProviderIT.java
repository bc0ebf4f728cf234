package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.MockHttpProvider.Answer;
import dev.sluice.testkit.MockHttpProvider.RetryAfterStyle;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.junit.jupiter.api.Test;

/** The mock provider's limits and switches, driven by an injected clock (no sleeping). */
class MockHttpProviderIT {
    private final ManualClock clock = new ManualClock(Instant.parse("2026-11-29T20:00:00Z"));
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> post(MockHttpProvider mock, String key) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(mock.url() + "/v1/messages"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"to\":\"1\"}")).header("Content-Type", "application/json");
        if (key != null) {
            b.header("X-Api-Key", key);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void five_per_second_per_key_with_a_burst_of_five_then_429_with_retry_after() throws Exception {
        try (MockHttpProvider mock = MockHttpProvider.builder().clock(clock).start()) {
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> ok = post(mock, "key-a");
                assertThat(ok.statusCode()).isEqualTo(200);
                assertThat(ok.body()).isEqualTo("{\"id\":" + (i + 1) + ",\"status\":\"queued\"}");
            }
            HttpResponse<String> refused = post(mock, "key-a");
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.headers().firstValue("Retry-After")).contains("1");
            assertThat(refused.body()).contains("\"reset\":1");
            assertThat(post(mock, "key-b").statusCode()).as("another key has its own budget").isEqualTo(200);
            clock.advance(Duration.ofMillis(200));
            assertThat(post(mock, "key-a").statusCode()).as("one interval later").isEqualTo(200);
            assertThat(post(mock, "key-a").statusCode()).isEqualTo(429);
            assertThat(post(mock, null).statusCode()).isEqualTo(401);
            assertThat(mock.accepted()).hasSize(7);
            assertThat(mock.accepted()).extracting(MockHttpProvider.Request::keyId)
                    .doesNotContain("key-a").contains(MockHttpProvider.keyId("key-a"), MockHttpProvider.keyId("key-b"));
            assertThat(mock.count429()).isEqualTo(2);
        }
    }

    @Test
    void forced_retry_after_as_http_date_and_the_soft_limit_switch() throws Exception {
        try (MockHttpProvider mock = MockHttpProvider.builder().clock(clock).retryAfter(RetryAfterStyle.HTTP_DATE).start()) {
            mock.forceRetryAfter(Duration.ofSeconds(10));
            HttpResponse<String> r = post(mock, "key-a");
            assertThat(r.statusCode()).isEqualTo(429);
            assertThat(r.headers().firstValue("Retry-After")).contains(DateTimeFormatter.RFC_1123_DATE_TIME
                    .format(clock.instant().plusSeconds(10).atZone(ZoneOffset.UTC)));
            clock.advance(Duration.ofSeconds(10));
            mock.softLimit(true);
            HttpResponse<String> soft = post(mock, "key-a");
            assertThat(soft.statusCode()).isEqualTo(200);
            assertThat(soft.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
            assertThat(soft.body()).contains("captcha");
            mock.softLimit(false);
            assertThat(post(mock, "key-a").statusCode()).isEqualTo(200);
            assertThat(mock.requests()).extracting(MockHttpProvider.Request::answer)
                    .containsExactly(Answer.FORCED_RETRY_AFTER, Answer.SOFT_LIMIT, Answer.ACCEPTED);
        }
    }
}
