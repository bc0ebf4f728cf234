package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.Settings;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a sender publishes as its limits ({@link SharedLimits}), without Redis: the budget script's hash follows what
 * the script does, not its comments.
 */
class SharedLimitsTest {
    private static final BudgetConfig DEFAULTS = BudgetConfig.from(Settings.of(Map.of()));

    private static String publishedScriptHash(String scriptText) {
        return SharedLimits.of(DEFAULTS, "alerts", scriptText).values().get(SharedLimits.SCRIPT);
    }

    /** budget.lua with only its comments, blank lines and whitespace edited, as an upgrade that rewords them. */
    static String commentOnlyEdit(String script) {
        Matcher firstComment = Pattern.compile("(?m)^[ \\t]*--[^\\n]*$").matcher(script);
        assertThat(firstComment.find()).as("budget.lua has a comment line").isTrue();
        String edited = script.substring(0, firstComment.start()) + "-- reworded: what this comment says changed"
                + script.substring(firstComment.end());
        Matcher firstCode = Pattern.compile("(?m)^[ \\t]*[a-z][^\\n]*$").matcher(edited);
        assertThat(firstCode.find()).as("budget.lua has a code line").isTrue();
        edited = edited.substring(0, firstCode.end()) + "   -- a new end-of-line comment" + edited.substring(firstCode.end());
        return "--[[ a new block comment,\n  over two lines ]]\n\n" + edited.replace("\n", "  \n")
                + "\n--[==[ another ]] still the comment ]==]\n-- the end\n";
    }

    @Test
    void aCommentOnlyEditOfBudgetLuaPublishesTheSameScriptHash() {
        String real = BudgetScript.TEXT;
        String edited = commentOnlyEdit(real);
        assertThat(edited).isNotEqualTo(real);
        assertThat(publishedScriptHash(edited)).isEqualTo(publishedScriptHash(real))
                .isEqualTo(SharedLimits.of(DEFAULTS, "alerts").values().get(SharedLimits.SCRIPT));
    }

    @Test
    void aCodeEditOfBudgetLuaPublishesAnotherScriptHash() {
        String real = BudgetScript.TEXT;
        assertThat(publishedScriptHash("local sluice_test_edit = 1\n" + real)).isNotEqualTo(publishedScriptHash(real));
        Matcher firstCode = Pattern.compile("(?m)^[ \\t]*[a-z][^\\n]*\\n").matcher(real);
        assertThat(firstCode.find()).isTrue();
        String doubled = real.substring(0, firstCode.end()) + firstCode.group() + real.substring(firstCode.end());
        assertThat(publishedScriptHash(doubled)).as("a code line twice").isNotEqualTo(publishedScriptHash(real));
    }

    @Test
    void aDoubleDashInsideAStringIsCodeNotAComment() {
        String base = "local a = '--x' -- note\nlocal b = \"y\\\"--z\"\nlocal c = [[--w]]\nreturn a .. b .. c\n";
        assertThat(publishedScriptHash(base))
                .isEqualTo(publishedScriptHash(base.replace("-- note", "-- another note")))
                .isNotEqualTo(publishedScriptHash(base.replace("'--x'", "'--v'")))
                .isNotEqualTo(publishedScriptHash(base.replace("\"y\\\"--z\"", "\"y\\\"--q\"")))
                .isNotEqualTo(publishedScriptHash(base.replace("[[--w]]", "[[--u]]")));
    }

    private static SharedLimits news(Map<String, String> settings) {
        return SharedLimits.of(BudgetConfig.from(Settings.of(settings)), "news");
    }

    @Test
    void theSameRateSetByAnotherKeyIsTheSameLimit() {
        SharedLimits byDefault = news(Map.of());
        SharedLimits perBot = news(Map.of("bot.news.rate.per.s", "30.0"));
        SharedLimits paid = news(Map.of("bot.news.paid.broadcast", "true", "budget.paid.broadcast.rate.per.s", "30"));
        SharedLimits provider = SharedLimits.of(DEFAULTS.toBuilder().botLimits("news", BudgetLimits.telegramDefaults())
                .build(), "news");
        assertThat(provider.values()).containsKey("provider.news.rate.per.s");
        for (SharedLimits a : new SharedLimits[] {byDefault, perBot, paid, provider}) {
            for (SharedLimits b : new SharedLimits[] {byDefault, perBot, paid, provider}) {
                assertThat(a.differences(b, "sender b")).as("%s against %s", a.text(), b.text()).isEmpty();
            }
        }
    }

    @Test
    void anotherRateIsNamedWithTheKeyEachSideSetItWithAndBothValues() {
        SharedLimits byDefault = news(Map.of());
        SharedLimits perBot = news(Map.of("bot.news.rate.per.s", "20"));
        assertThat(perBot.differences(byDefault, "sender a"))
                .containsExactly("bot.news.rate.per.s=20 here, budget.global.rate.per.s=30 at sender a");
        assertThat(byDefault.differences(perBot, "sender b"))
                .containsExactly("budget.global.rate.per.s=30 here, bot.news.rate.per.s=20 at sender b");
        assertThat(byDefault.differences(news(Map.of("budget.global.rate.per.s", "10")), "sender c"))
                .containsExactly("budget.global.rate.per.s=30 here, 10 at sender c");
    }

    @Test
    void theFallbackShareAndTheOutageModeArePublished() {
        SharedLimits byDefault = news(Map.of());
        assertThat(byDefault.values()).containsEntry("budget.max.replicas", "3")
                .containsEntry("budget.redis.outage.mode", "local-fallback");
        assertThat(byDefault.differences(news(Map.of("budget.max.replicas", "4",
                "budget.redis.outage.mode", "FAIL_CLOSED")), "sender b")).containsExactly(
                "budget.max.replicas=3 here, 4 at sender b",
                "budget.redis.outage.mode=local-fallback here, fail-closed at sender b");
    }
}
