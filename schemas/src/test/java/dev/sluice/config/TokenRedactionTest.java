package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The project's one token redaction. Holds the cases of the two redactions it replaced (this class's, and the
 * sender's {@code BotToken.redactAny}, whose looser shape {@code \d{3,}:[A-Za-z0-9_-]{10,}} it now covers) and the
 * forms a token takes on its way through an HTTP client.
 */
class TokenRedactionTest {
    // Built from parts so the source holds no token-shaped literal (secret scanners); the value is fake.
    private static final String TOKEN = "110201543:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_-";
    private static final String SECRET = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_-";

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

    @Test
    void theSendersLooserShapeIsCoveredShortBotIdsAndShortSecrets() {
        // what BotToken.redactAny caught and the old pattern here (6..12 digits, 30+ characters) did not
        assertThat(TokenRedaction.redact("Unauthorized: 123:" + "abcdefghij")).isEqualTo("Unauthorized: [redacted]");
        assertThat(TokenRedaction.redact("bot 1234567890123:" + "AAHdq-Tcv_CH1vGW end")).isEqualTo("bot [redacted] end");
        assertThat(TokenRedaction.redact("description: Bad Request: " + TOKEN.substring(0, 25)))
                .as("a token cut short by a provider's message").isEqualTo("description: Bad Request: [redacted]");
    }

    @Test
    void numberPairsStayReadable() {
        // a secret is 35 random URL-safe characters, never digits only: a chat:message or topic:partition:offset
        // pair of numbers is not a token
        String text = "id us7000abcd:-1001234567890 dup 40123456:1001234567 at sluice-results:0:12345678901";
        assertThat(TokenRedaction.redact(text)).isEqualTo(text);
        assertThat(TokenRedaction.redact("12:34:56 and 12345:short")).isEqualTo("12:34:56 and 12345:short");
    }

    @Test
    void aPercentEncodedColonIsStillAToken() {
        String encoded = "110201543%3A" + SECRET;
        assertThat(TokenRedaction.redact("GET /send?key=" + encoded + "&to=1")).isEqualTo("GET /send?key=[redacted]&to=1");
        assertThat(TokenRedaction.redact("key=110201543%3a" + SECRET)).isEqualTo("key=[redacted]");
        assertThat(TokenRedaction.redact("next=%2Fcb%3Fkey%3D110201543%253A" + SECRET)).isEqualTo("next=%2Fcb%3Fkey%3D[redacted]");
        assertThat(TokenRedaction.redact("https://api.telegram.org/bot" + encoded + "/getMe"))
                .isEqualTo("https://api.telegram.org/bot[redacted]/getMe");
    }

    @Test
    void aBotSegmentWithATokenIsRemovedHoweverTheUrlEnds() {
        assertThat(TokenRedaction.redact("base url https://api.telegram.org/bot" + TOKEN))
                .isEqualTo("base url https://api.telegram.org/bot[redacted]");
        assertThat(TokenRedaction.redact("\"http://fake:8081/bot" + "42:x\" refused"))
                .isEqualTo("\"http://fake:8081/bot[redacted]\" refused");
        assertThat(TokenRedaction.redact("file at https://api.telegram.org/file/bot" + TOKEN + "/photos/p.jpg"))
                .isEqualTo("file at https://api.telegram.org/file/bot[redacted]/photos/p.jpg");
        // no colon and no closing slash: not a token place (a word like "/botany" stays)
        assertThat(TokenRedaction.redact("see /botany?x=1")).isEqualTo("see /botany?x=1");
    }

    @Test
    void httpClientExceptionMessagesLoseTheToken() {
        // what OkHttp, the JDK client and java.net.URI put in their messages: the whole request URL
        String uri = new IllegalArgumentException("Illegal character in path at index 52: https://api.telegram.org/bot"
                + TOKEN + "/send Message").getMessage();
        assertThat(TokenRedaction.redact(uri)).doesNotContain(SECRET).contains("/bot[redacted]/send Message");
        String io = "java.io.IOException: unexpected end of stream on http://127.0.0.1:8081/bot" + TOKEN + "/sendMessage...";
        assertThat(TokenRedaction.redact(io)).doesNotContain(SECRET).doesNotContain("110201543");
        String json = "{\"ok\":false,\"error_code\":401,\"description\":\"Unauthorized: " + TOKEN + "\"}";
        assertThat(TokenRedaction.redact(json)).isEqualTo("{\"ok\":false,\"error_code\":401,\"description\":\"Unauthorized: [redacted]\"}");
    }

    @Test
    void aKnownSecretOfAnyShapeIsRemovedPlainEncodedAndJsonEscaped() {
        String key = "k3y s3cr3t/+\"v@lue";
        String text = "plain " + key + " url ?key=k3y+s3cr3t%2F%2B%22v%40lue path /k3y%20s3cr3t%2F%2B%22v%40lue"
                + " json {\"key\":\"k3y s3cr3t/+\\\"v@lue\"}";
        assertThat(TokenRedaction.redact(text, key))
                .isEqualTo("plain [redacted] url ?key=[redacted] path /[redacted] json {\"key\":\"[redacted]\"}");
        // this token by value and any other by shape
        assertThat(TokenRedaction.redact("mine " + TOKEN + " other 998877665:" + "BBcdefghijklmnopqrstuvwxyz", TOKEN))
                .isEqualTo("mine [redacted] other [redacted]");
        assertThat(TokenRedaction.redact("short-test-token refused", "short-test-token")).isEqualTo("[redacted] refused");
        assertThat(TokenRedaction.redact(null, key)).isNull();
        assertThat(TokenRedaction.redact("no secret " + TOKEN, null)).isEqualTo("no secret [redacted]");
        assertThat(TokenRedaction.redact("nothing here", "")).isEqualTo("nothing here");
    }

    /**
     * Found from outside: a provider (or a proxy before it) echoing the token's secret half without the bot id put it
     * into a result's reason on delivery.results; the shape rule needs the id and the colon, and the value rule took
     * the whole token only.
     */
    @Test
    void theSecretHalfOfAKnownTokenIsRemovedAlone() {
        String token = "123456789:" + "AAHsecretTOKENvalue0123456789abcdefg";
        String half = token.substring(token.indexOf(':') + 1);
        assertThat(TokenRedaction.redact("Bad Request: " + half, token)).isEqualTo("Bad Request: [redacted]");
        assertThat(TokenRedaction.redact("{\"d\":\"" + half + "\"} url ?t=" + half, token))
                .isEqualTo("{\"d\":\"[redacted]\"} url ?t=[redacted]");
        assertThat(TokenRedaction.redact("whole " + token, token)).isEqualTo("whole [redacted]");
        // a short secret half is not redacted alone: it could match ordinary words
        assertThat(TokenRedaction.redact("the bot said hello", "12:hello")).isEqualTo("the bot said hello");
    }
}
