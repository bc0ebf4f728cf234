package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ChatRegistryTest {

    @Test
    void a_mark_is_per_bot_and_applies_to_messages_released_until_it_was_learned() {
        ChatRegistry r = new ChatRegistry(100);
        r.markInactive("a", "42", 10_000);
        assertThat(r.isInactive("a", "42", 9_000, 10_001)).as("released before the 403").isTrue();
        assertThat(r.isInactive("a", "42", 10_000, 10_001)).as("at T").isTrue();
        assertThat(r.isInactive("a", "42", 10_001, 10_002)).as("released after: the topology saw it active").isFalse();
        assertThat(r.isInactive("b", "42", 9_000, 10_001)).as("another bot").isFalse();
        r.markActive("a", "42"); // a delivery by a
        assertThat(r.isInactive("a", "42", 9_000, 10_001)).isFalse();
    }

    @Test
    void marks_lapse_after_the_ttl_and_the_oldest_go_past_the_bound() {
        ChatRegistry r = new ChatRegistry(2, Duration.ofMinutes(60));
        r.markInactive("a", "1", 0);
        assertThat(r.isInactive("a", "1", 0, Duration.ofMinutes(60).toMillis())).isTrue();
        assertThat(r.isInactive("a", "1", 0, Duration.ofMinutes(60).toMillis() + 1)).as("past the 1 h TTL").isFalse();
        r.markInactive("a", "1", 100);
        r.markInactive("a", "2", 100);
        r.markInactive("a", "3", 100);
        assertThat(r.isInactive("a", "1", 0, 200)).as("least recently used, forgotten").isFalse();
        assertThat(r.isInactive("a", "3", 0, 200)).isTrue();
    }

    @Test
    void chat_ids_are_normalised_before_they_key_anything() {
        ChatRegistry r = new ChatRegistry(100);
        r.markInactive("a", " @MyChannel ", 10);
        assertThat(r.isInactive("a", "@mychannel", 0, 20)).isTrue();
        r.migrate(" -42", "-10042 ");
        assertThat(r.resolve("-42")).isEqualTo("-10042");
        assertThat(r.resolve(" 7 ")).isEqualTo("7");
    }
}
