package dev.sluice.sender.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.config.Settings;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.testkit.MockHttpProvider;
import dev.sluice.testkit.MockHttpProvider.RetryAfterStyle;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link HttpProviderTransport} over real HTTP against {@link MockHttpProvider}: what goes out, what comes back. */
class HttpProviderTransportIT {
    private static final String API_KEY = "key-" + "transport-it";
    private static final String TEXT = "Meeting \"Q4\" moved\nto 15:00 & room 2 — ✓";

    private static HttpProviderTransport transport(String url, String... extra) {
        Map<String, String> m = new HashMap<>();
        m.put("provider.sms.url.template", url + "/v1/messages?to={chat}");
        m.put("provider.sms.header.X-Api-Key", "{token}");
        m.put("provider.sms.body.template", "{\"to\":\"{chat}\",\"text\":\"{text}\"}");
        m.put("provider.sms.rate.per.s", "5");
        m.put("provider.sms.backoff.base.ms", "300");
        m.put("provider.sms.response.content.type", "application/json");
        m.put("provider.sms.response.json.pointer", "/id");
        for (int i = 0; i < extra.length; i += 2) {
            m.put(extra[i], extra[i + 1]);
        }
        return new HttpProviderTransport(HttpProviderConfig.all(Settings.of(m)), Map.of("sms", new BotToken(API_KEY)),
                Duration.ofSeconds(2), Duration.ofSeconds(5));
    }

    @Test
    void the_request_carries_the_filled_templates_and_an_acceptance_is_delivered_with_its_id() throws Exception {
        try (MockHttpProvider mock = MockHttpProvider.start(); HttpProviderTransport t = transport(mock.url())) {
            SendOutcome o = t.send("sms", "+1 555 0100", TEXT, null);
            assertThat(o).isEqualTo(new SendOutcome.Delivered(1));
            MockHttpProvider.Request r = mock.requests().get(0);
            assertThat(r.method()).isEqualTo("POST");
            assertThat(r.uri()).isEqualTo("/v1/messages?to=%2B1%20555%200100");
            assertThat(r.contentType()).isEqualTo("application/json");
            assertThat(r.keyId()).isEqualTo(MockHttpProvider.keyId(API_KEY));
            JsonNode body = new ObjectMapper().readTree(r.body());
            assertThat(body.get("to").asText()).isEqualTo("+1 555 0100");
            assertThat(body.get("text").asText()).isEqualTo(TEXT);
        }
    }

    @Test
    void a_429_is_read_in_each_form_the_mock_answers() {
        for (RetryAfterStyle style : RetryAfterStyle.values()) {
            try (MockHttpProvider mock = MockHttpProvider.builder().retryAfter(style).start();
                 HttpProviderTransport t = transport(mock.url(), "provider.sms.retry.after.json.field", "reset")) {
                mock.forceRetryAfter(Duration.ofSeconds(10));
                SendOutcome.RetryAfter r = (SendOutcome.RetryAfter) t.send("sms", "1", "x", null);
                assertThat(r.scope()).isEqualTo(SendOutcome.PenaltyScope.BOT);
                // delta 10 s; an HTTP-date rounded up to the next second: 10..11 s from now; NONE: the body's reset
                assertThat(r.retryAfter()).as("%s: %s", style, r.description())
                        .isBetween(Duration.ofMillis(9_000), Duration.ofMillis(11_000));
                assertThat(r.description()).contains(style == RetryAfterStyle.NONE ? "/reset" : "Retry-After");
            }
        }
    }

    @Test
    void a_captcha_page_is_a_throttle_signal_5xx_and_connection_refused_are_transient_other_4xx_permanent() throws Exception {
        try (MockHttpProvider mock = MockHttpProvider.start(); HttpProviderTransport t = transport(mock.url())) {
            mock.softLimit(true);
            SendOutcome o = t.send("sms", "1", "x", null);
            assertThat(o).isInstanceOf(SendOutcome.RetryAfter.class);
            assertThat(((SendOutcome.RetryAfter) o).description()).contains("soft limit", "text/html", "captcha");
            assertThat(((SendOutcome.RetryAfter) o).retryAfter().toMillis()).isBetween(1L, 300L);
            assertThat(mock.accepted()).isEmpty();
        }
        try (MockHttpProvider mock = MockHttpProvider.start(); HttpProviderTransport t = transport(mock.url())) {
            mock.answerStatus(503);
            assertThat(t.send("sms", "1", "x", null)).isEqualTo(new SendOutcome.TransientFailure(503,
                    "HTTP 503 from provider sms: {\"error\":\"forced status 503\"}", false));
            mock.answerStatus(422);
            assertThat(t.send("sms", "1", "x", null)).isInstanceOf(SendOutcome.PermanentFailure.class);
        }
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        try (HttpProviderTransport t = transport("http://127.0.0.1:" + closedPort)) {
            SendOutcome o = t.send("sms", "1", "x", null);
            assertThat(o).isInstanceOf(SendOutcome.TransientFailure.class);
            assertThat(((SendOutcome.TransientFailure) o).maybeDelivered()).isFalse();
            assertThat(((SendOutcome.TransientFailure) o).description()).doesNotContain(API_KEY);
        }
    }
}
