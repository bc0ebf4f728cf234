package dev.sluice.sender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TemplateTest {
    private static final String NASTY = "He said \"hi\"\n\tback\\slash & 100% + é ✓ \u0001";

    @Test
    void json_body_values_are_escaped_by_jackson_and_read_back_unchanged() throws Exception {
        Template t = Template.parse("{\"to\":\"{chat}\",\"text\":\"{text}\",\"n\":{\"k\":1}}", Template.Encoding.JSON);
        String filled = t.fill(Map.of("chat", "+1 555 0100", "text", NASTY));
        JsonNode json = new ObjectMapper().readTree(filled);
        assertThat(json.get("to").asText()).isEqualTo("+1 555 0100");
        assertThat(json.get("text").asText()).isEqualTo(NASTY);
        assertThat(json.at("/n/k").asInt()).as("literal braces stay").isEqualTo(1);
    }

    @Test
    void url_values_are_percent_encoded_with_spaces_as_percent_20() {
        Template t = Template.parse("https://api.example/send?to={chat}&msg={text}", Template.Encoding.URL);
        assertThat(t.fill(Map.of("chat", "+1 555", "text", "a&b=c d")))
                .isEqualTo("https://api.example/send?to=%2B1%20555&msg=a%26b%3Dc%20d");
    }

    @Test
    void form_values_are_form_encoded() {
        Template t = Template.parse("to={chat}&text={text}", Template.Encoding.FORM);
        assertThat(t.fill(Map.of("chat", "+1", "text", "a b&c"))).isEqualTo("to=%2B1&text=a+b%26c");
    }

    @Test
    void headers_are_verbatim_and_missing_values_are_empty() {
        Template t = Template.parse("Bearer {token}", Template.Encoding.NONE);
        assertThat(t.uses("token")).isTrue();
        assertThat(t.fill(Map.of("token", "abc"))).isEqualTo("Bearer abc");
        assertThat(t.fill(Map.of())).isEqualTo("Bearer ");
        assertThat(t.toString()).as("the template, never a filled secret").isEqualTo("Bearer {token}");
    }

    @Test
    void an_unknown_placeholder_is_an_error_naming_it() {
        assertThatThrownBy(() -> Template.parse("{\"to\":\"{chat_id}\"}", Template.Encoding.JSON))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("{chat_id}");
    }
}
