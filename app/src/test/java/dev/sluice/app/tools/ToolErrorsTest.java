package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.SecretRedaction;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** A tool's error line goes through the same redaction as every log line (by shape and by remembered value). */
class ToolErrorsTest {

    @Test
    void anErrorLineHidesUrlUserInfoAndRememberedSecretsOfAnyShape() {
        String apiKey = "pk-live-" + Long.toHexString(System.nanoTime()) + "q7";
        SecretRedaction.rememberEntry("provider.acme.api.key", apiKey);
        StringWriter err = new StringWriter();

        int code = ToolErrors.run("results", new PrintWriter(err), false, () -> {
            throw new IllegalStateException("provider said 401 for key " + apiKey
                    + " via redis://default:s3cret-pass@redis:6379");
        });

        assertThat(code).isNotZero();
        assertThat(err.toString())
                .startsWith("results: IllegalStateException: provider said 401 for key [redacted]")
                .contains("redis://[redacted]@redis:6379")
                .doesNotContain(apiKey)
                .doesNotContain("s3cret-pass");
    }

    @Test
    void nullTextIsEmpty() {
        assertThat(ToolErrors.safe(null)).isEmpty();
    }
}
