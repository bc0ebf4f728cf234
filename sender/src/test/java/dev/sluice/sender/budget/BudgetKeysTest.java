package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Issue 19: the bot id check without a regex matcher accepts exactly what {@link BudgetKeys#BOT_ID} accepts. */
class BudgetKeysTest {

    @Test
    void the_bot_id_check_agrees_with_the_pattern() {
        List<String> ids = new ArrayList<>(List.of("", "a", "alerts", "ext:sms-api:prod", "A_b.c-9", "x".repeat(64),
                "x".repeat(65), "{bot}", "bot id", "bot\n", "é", "bot/1", "bot*", "ünï", "-", ".", ":", "_", "9"));
        Random random = new Random(19);
        String pool = "aZ09_.:-{} /\\é\u0000\tÿ|";
        for (int i = 0; i < 5_000; i++) {
            StringBuilder b = new StringBuilder();
            int n = random.nextInt(70);
            for (int j = 0; j < n; j++) {
                b.append(pool.charAt(random.nextInt(pool.length())));
            }
            ids.add(b.toString());
        }
        for (String id : ids) {
            assertThat(BudgetKeys.isBotId(id)).as("'%s'", id).isEqualTo(BudgetKeys.BOT_ID.matcher(id).matches());
        }
        assertThat(BudgetKeys.isBotId(null)).isFalse();
    }

    @Test
    void a_tag_names_the_bot_and_refuses_an_invalid_id() {
        assertThat(BudgetKeys.tag("alerts")).isEqualTo("sluice:{alerts}");
        assertThatThrownBy(() -> BudgetKeys.tag("a{b}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("invalid bot id");
        assertThatThrownBy(() -> BudgetKeys.tag(null)).isInstanceOf(IllegalArgumentException.class);
    }
}
