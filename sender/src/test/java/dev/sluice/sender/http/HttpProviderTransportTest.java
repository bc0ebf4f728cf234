package dev.sluice.sender.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.Settings;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.provider.SendOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Classification of answers, without a server; a fixed clock for HTTP-dates and epoch fields. */
class HttpProviderTransportTest {
    private static final Instant NOW = Instant.parse("2026-11-29T20:10:00Z");
    private static final BotToken TOKEN = new BotToken("key-" + "s3cr3t-value");

    private final Map<String, String> settings = new HashMap<>(HttpProviderConfigTest.sms());
    private HttpProviderTransport transport;

    private HttpProviderConfig provider() {
        HttpProviderConfig p = HttpProviderConfig.of("sms-api", Settings.of(settings));
        transport = new HttpProviderTransport(Map.of("sms-api", p), Map.of("sms-api", TOKEN), Duration.ofSeconds(1),
                Duration.ofSeconds(1), Clock.fixed(NOW, ZoneOffset.UTC), new SplittableRandom(7));
        return p;
    }

    @AfterEach
    void close() {
        if (transport != null) {
            transport.close();
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void a_429_with_retry_after_10_in_either_form_waits_10_s_bot_wide() {
        HttpProviderConfig p = provider();
        for (String header : new String[] {"10", "Sun, 29 Nov 2026 20:10:10 GMT"}) {
            SendOutcome o = transport.classify(p, 429, header, "application/json", b("{\"reset\":99}"), TOKEN);
            assertThat(o).as(header).isEqualTo(new SendOutcome.RetryAfter(Duration.ofSeconds(10),
                    SendOutcome.PenaltyScope.BOT, ((SendOutcome.RetryAfter) o).description()));
        }
    }

    @Test
    void without_a_usable_header_the_json_field_decides() {
        HttpProviderConfig p = provider();
        SendOutcome o = transport.classify(p, 429, "garbage", "application/json", b("{\"reset\":7}"), TOKEN);
        assertThat(((SendOutcome.RetryAfter) o).retryAfter()).isEqualTo(Duration.ofSeconds(7));
        assertThat(((SendOutcome.RetryAfter) o).description()).contains("/reset");
        settings.put("provider.sms-api.retry.after.json.field", "/error/reset_at");
        settings.put("provider.sms-api.retry.after.json.format", "epoch-seconds");
        HttpProviderConfig q = provider();
        long at = NOW.getEpochSecond() + 12;
        SendOutcome e = transport.classify(q, 429, null, "application/json",
                b("{\"error\":{\"reset_at\":\"" + at + "\"}}"), TOKEN);
        assertThat(((SendOutcome.RetryAfter) e).retryAfter()).isEqualTo(Duration.ofSeconds(12));
    }

    @Test
    void with_nothing_to_read_a_429_backs_off_with_full_jitter_growing_over_the_streak_and_a_success_resets_it() {
        HttpProviderConfig p = provider(); // base 200 ms, cap 5 s
        long[] ceilings = {200, 400, 800, 1600, 3200, 5000, 5000};
        for (long ceiling : ceilings) {
            SendOutcome o = transport.classify(p, 429, null, "text/plain", b("slow down"), TOKEN);
            SendOutcome.RetryAfter r = (SendOutcome.RetryAfter) o;
            assertThat(r.scope()).isEqualTo(SendOutcome.PenaltyScope.BOT);
            assertThat(r.retryAfter().toMillis()).isBetween(1L, ceiling);
        }
        assertThat(transport.classify(p, 200, null, "application/json", b("{\"id\":5,\"s\":\"ok\"}"), TOKEN))
                .isEqualTo(new SendOutcome.Delivered(5));
        SendOutcome after = transport.classify(p, 429, null, "text/plain", b(""), TOKEN);
        assertThat(((SendOutcome.RetryAfter) after).retryAfter().toMillis()).isBetween(1L, 200L);
    }

    @Test
    void a_200_failing_the_response_check_is_a_throttle_signal_never_a_delivery() {
        HttpProviderConfig p = provider();
        SendOutcome o = transport.classify(p, 200, null, "text/html", b("<html>captcha " + TOKEN.reveal() + "</html>"),
                TOKEN);
        assertThat(o).isInstanceOf(SendOutcome.RetryAfter.class);
        SendOutcome.RetryAfter r = (SendOutcome.RetryAfter) o;
        assertThat(r.scope()).isEqualTo(SendOutcome.PenaltyScope.BOT);
        assertThat(r.retryAfter().toMillis()).isBetween(1L, 200L);
        assertThat(r.description()).startsWith("soft limit:").contains("captcha").doesNotContain(TOKEN.reveal());
        assertThat(transport.classify(p, 200, null, "application/json", b("[]"), TOKEN))
                .isInstanceOf(SendOutcome.RetryAfter.class);
    }

    @Test
    void a_body_echoing_the_key_is_redacted_before_it_is_cut_and_in_its_percent_encoded_form() {
        HttpProviderConfig p = provider();
        // the key straddles the 160-character cut: cutting first left "key-s3cr" in the description
        SendOutcome cut = transport.classify(p, 400, null, "text/plain", b("x".repeat(152) + TOKEN.reveal()), TOKEN);
        assertThat(((SendOutcome.PermanentFailure) cut).description()).doesNotContain("s3cr").endsWith("…");
        // an error page quoting the request URL shows the key as the URL template filled it: percent-encoded
        BotToken odd = new BotToken("k3y s3cr3t/+" + "v@lue");
        SendOutcome echoed = transport.classify(p, 404, null, "text/html",
                b("<p>no route for /send?key=k3y%20s3cr3t%2F%2Bv%40lue&to=1</p>"), odd);
        assertThat(((SendOutcome.PermanentFailure) echoed).description()).doesNotContain("s3cr3t")
                .contains("/send?key=[redacted]&to=1");
    }

    @Test
    void status_families() {
        HttpProviderConfig p = provider();
        assertThat(transport.classify(p, 200, null, "application/json", b("{\"id\":\"abc-1\"}"), TOKEN))
                .as("a non-numeric id").isEqualTo(new SendOutcome.Delivered(0));
        assertThat(transport.classify(p, 503, null, "text/html", b("<h1>down</h1>"), TOKEN))
                .isInstanceOf(SendOutcome.TransientFailure.class)
                .satisfies(o -> assertThat(((SendOutcome.TransientFailure) o).maybeDelivered()).isFalse());
        assertThat(transport.classify(p, 400, null, "application/json", b("{\"error\":\"bad number\"}"), TOKEN))
                .isEqualTo(new SendOutcome.PermanentFailure(400, "HTTP 400 from provider sms-api: {\"error\":\"bad number\"}"));
        assertThat(transport.classify(p, 403, null, null, b(""), TOKEN)).isInstanceOf(SendOutcome.PermanentFailure.class);
        assertThat(transport.classify(p, 302, null, null, b(""), TOKEN)).isInstanceOf(SendOutcome.PermanentFailure.class);
    }
}
