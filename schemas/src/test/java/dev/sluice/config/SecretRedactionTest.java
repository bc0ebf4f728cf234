package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SecretRedactionTest {

    @Test
    void keysThatHoldKeysPassphrasesUserInfoOrCredentialsAreSecret() {
        assertThat(SecretRedaction.isSecretKey("kafka.ssl.keystore.key")).isTrue();
        assertThat(SecretRedaction.isSecretKey("kafka.ssl.key.password")).isTrue();
        assertThat(SecretRedaction.isSecretKey("kafka.sasl.oauthbearer.assertion.private.key.passphrase")).isTrue();
        assertThat(SecretRedaction.isSecretKey("kafka.sasl.oauthbearer.client.credentials.client.secret")).isTrue();
        assertThat(SecretRedaction.isSecretKey("basic.auth.user.info")).isTrue();
        assertThat(SecretRedaction.isSecretKey("schema.registry.basic.auth.user.info")).isTrue();
        assertThat(SecretRedaction.isSecretKey("kafka.sasl.jaas.config")).isTrue();
        assertThat(SecretRedaction.isSecretKey("bot.alerts.token")).isTrue();
        assertThat(SecretRedaction.isSecretKey("quota.jdbc.password")).isTrue();
        assertThat(SecretRedaction.isSecretKey("provider.x.api.key")).isTrue();
        assertThat(SecretRedaction.isSecretKey("provider.sms.header.Authorization")).isTrue();
        assertThat(SecretRedaction.isSecretKey("provider.sms.header.X-Api-Key")).isTrue();

        assertThat(SecretRedaction.isSecretKey("provider.sms.limit.key")).isFalse();
        assertThat(SecretRedaction.isSecretKey("basic.auth.credentials.source")).isFalse();
        assertThat(SecretRedaction.isSecretKey("kafka.key.serializer")).isFalse();
        assertThat(SecretRedaction.isSecretKey("digest.max.keys")).isFalse();
        assertThat(SecretRedaction.isSecretKey("redis.url")).isFalse();
        assertThat(SecretRedaction.isSecretKey("kafka.ssl.keystore.type")).isFalse();
    }

    @Test
    void settingsToStringAndErrorsShowNoSecret() {
        Settings s = Settings.of(Map.of("kafka.ssl.keystore.key", "-----BEGIN PRIVATE KEY-----MIIEplanted",
                "kafka.sasl.oauthbearer.assertion.private.key.passphrase", "oauth-pass-1",
                "basic.auth.user.info", "svc:reg-pass-1", "redis.url", "redis://:redis-pass-1@redis:6379",
                "provider.sms.limit.key", "ext:sms"));
        assertThat(s.toString()).doesNotContain("MIIEplanted", "oauth-pass-1", "reg-pass-1", "redis-pass-1")
                .contains("redis://[redacted]@redis:6379", "provider.sms.limit.key=ext:sms");

        ConfigException e = Settings.invalid("redis.url", "http://user:redis-pass-2@redis:6379", "a redis:// URL");
        assertThat(e.getMessage()).doesNotContain("redis-pass-2").contains("http://[redacted]@redis:6379", "redis.url");
    }

    @Test
    void urlUserInfoGoesFromAnyTextIncludingAPercentPassword() {
        String uriError = "java.net.URISyntaxException: Malformed escape pair at index 11: redis://:pa%zz@redis:6379";
        assertThat(SecretRedaction.redact(uriError)).isEqualTo(
                "java.net.URISyntaxException: Malformed escape pair at index 11: redis://[redacted]@redis:6379");
        assertThat(SecretRedaction.redact("a@b.c and http://host:8081/x?mail=a@b")).isEqualTo("a@b.c and http://host:8081/x?mail=a@b");
        assertThat(SecretRedaction.redact("jdbc:postgresql://pg:5432/sluice?user=sluice&password=pg-pass-1&ssl=true"))
                .isEqualTo("jdbc:postgresql://pg:5432/sluice?user=sluice&password=[redacted]&ssl=true");
    }

    @Test
    void rememberedSecretsGoInTheirEncodedFormsToo() {
        Settings.of(Map.of("bot.sms.token", "sk-remembered+/=K1"));
        assertThat(SecretRedaction.redact("body: {\"key\":\"sk-remembered+/=K1\"} url ?k=sk-remembered%2B%2F%3DK1"))
                .isEqualTo("body: {\"key\":\"[redacted]\"} url ?k=[redacted]");
        // Short values, user names and client ids are not remembered: they would eat ordinary words.
        Settings.of(Map.of("x.password", "abc", "redis.url", "redis://default@redis:6379",
                "kafka.sasl.oauthbearer.client.credentials.client.id", "sluice-app"));
        assertThat(SecretRedaction.redact("abc default sluice-app")).isEqualTo("abc default sluice-app");
    }

    @Test
    void aPemKeyIsRemovedLineByLine() {
        Settings.of(Map.of("kafka.ssl.keystore.key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQplanted\n-----END PRIVATE KEY-----"));
        assertThat(SecretRedaction.redact("line: MIIEvQIBADANBgkqhkiG9w0BAQplanted")).isEqualTo("line: [redacted]");
    }
}
