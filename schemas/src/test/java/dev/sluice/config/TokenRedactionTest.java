package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TokenRedactionTest {
    // Built from parts so the source holds no token-shaped literal (secret scanners); the value is fake.
    private static final String TOKEN = "110201543:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_-";

    @Test
    void tokensAreRemovedFromTextAndUrls() {
        assertThat(TokenRedaction.redact("token=" + TOKEN + " end")).isEqualTo("token=[redacted] end");
        assertThat(TokenRedaction.redact("POST https://api.telegram.org/bot" + TOKEN + "/sendMessage"))
                .isEqualTo("POST https://api.telegram.org/bot[redacted]/sendMessage");
        // A token that does not look like Telegram's (e.g. a test token) is still removed from the URL path.
        assertThat(TokenRedaction.redact("http://127.0.0.1:8081/botshort-test-token/sendMessage"))
                .isEqualTo("http://127.0.0.1:8081/bot[redacted]/sendMessage");
    }

    @Test
    void ordinaryTextIsLeftAlone() {
        String text = "chat 12345678 at 2026-01-01T00:00:00Z, retry_after=32, host:port 10.0.0.1:9092";
        assertThat(TokenRedaction.redact(text)).isEqualTo(text);
        assertThat(TokenRedaction.containsToken(text)).isFalse();
        assertThat(TokenRedaction.redact(null)).isNull();
    }

    @Test
    void redactedTextIsStable() {
        String once = TokenRedaction.redact("/bot" + TOKEN + "/getMe " + TOKEN);
        assertThat(once).doesNotContain(TOKEN);
        assertThat(TokenRedaction.redact(once)).isEqualTo(once);
        assertThat(TokenRedaction.containsToken(once)).isFalse();
        assertThat(TokenRedaction.containsToken(TOKEN)).isTrue();
    }
}
