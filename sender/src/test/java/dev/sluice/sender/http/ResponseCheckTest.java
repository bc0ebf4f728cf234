package dev.sluice.sender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ResponseCheckTest {
    private static final String JSON = "application/json; charset=utf-8";
    private final ResponseCheck check = new ResponseCheck(200, "application/json", "/id", 10);

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void a_real_acceptance_passes_and_yields_the_node() {
        ResponseCheck.Verdict v = check.check(200, JSON, b("{\"id\":42,\"status\":\"queued\"}"));
        assertThat(v.passed()).isTrue();
        assertThat(v.found().asLong()).isEqualTo(42);
    }

    @Test
    void a_captcha_page_fails_on_content_type() {
        ResponseCheck.Verdict v = check.check(200, "text/html; charset=utf-8", b("<html><body>captcha</body></html>"));
        assertThat(v.passed()).isFalse();
        assertThat(v.failure()).startsWith("soft limit:").contains("text/html");
    }

    @Test
    void an_empty_list_fails_on_size_and_a_cut_list_on_the_pointer() {
        assertThat(check.check(200, JSON, b("[]")).failure()).contains("2 bytes");
        ResponseCheck items = new ResponseCheck(0, null, "/items/20", 0);
        assertThat(items.check(200, JSON, b("{\"items\":[" + "1,".repeat(19) + "1]}")).failure())
                .contains("/items/20 is missing");
        assertThat(items.check(200, JSON, b("{\"items\":[" + "1,".repeat(20) + "1]}")).passed()).isTrue();
    }

    @Test
    void a_null_or_missing_pointer_or_a_non_json_body_fails() {
        assertThat(check.check(200, JSON, b("{\"id\":null,\"x\":\"yyyy\"}")).passed()).isFalse();
        assertThat(check.check(200, JSON, b("{\"other\":\"yyyyyyyy\"}")).failure()).contains("/id");
        assertThat(check.check(200, JSON, b("not json at all")).failure()).contains("not JSON");
    }

    @Test
    void another_2xx_than_the_expected_one_fails() {
        assertThat(check.check(202, JSON, b("{\"id\":42,\"s\":1}")).failure()).contains("status 202, expected 200");
    }

    @Test
    void without_settings_any_2xx_passes() {
        assertThat(ResponseCheck.ANY_2XX.check(204, null, new byte[0]).passed()).isTrue();
    }

    @Test
    void invalid_settings_are_refused() {
        assertThatThrownBy(() -> new ResponseCheck(404, null, null, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ResponseCheck(0, null, "id", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ResponseCheck(0, null, null, -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
