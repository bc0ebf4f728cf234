package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@link LuaCode}: comments and layout go, string literals (with any {@code --} in them) stay exactly. */
class LuaCodeTest {

    @Test
    void lineAndBlockCommentsBlankLinesAndLayoutGo() {
        String source = "-- header\n\n  local x = 1   -- why\r\n\tlocal y  =  x --[[ inline ]] + 2  \n"
                + "--[==[ a block\n with ]] inside ]==]\nreturn y\n\n-- end";
        assertThat(LuaCode.of(source)).isEqualTo("local x = 1\nlocal y = x + 2\nreturn y");
    }

    @Test
    void aDoubleDashInAStringLiteralIsKept() {
        assertThat(LuaCode.of("local a = '--x' -- note")).isEqualTo("local a = '--x'");
        assertThat(LuaCode.of("local b = \"q\\\"--z\" .. 'it\\'s -- kept' -- note"))
                .isEqualTo("local b = \"q\\\"--z\" .. 'it\\'s -- kept'");
        assertThat(LuaCode.of("local c = [[--w\n  -- still the string  ]] -- note"))
                .isEqualTo("local c = [[--w\n  -- still the string  ]]");
        assertThat(LuaCode.of("local d = [=[ ]] -- ]=] -- note")).isEqualTo("local d = [=[ ]] -- ]=]");
        assertThat(LuaCode.of("local e = t[ [[k]] ] -- note")).isEqualTo("local e = t[ [[k]] ]");
    }

    @Test
    void aMultiLineBlockCommentStillSeparatesItsLines() {
        assertThat(LuaCode.of("local f = g --[[ a\n b ]] (h)")).isEqualTo("local f = g\n(h)");
    }

    @Test
    void budgetLuaKeepsEveryCodeLine() {
        String code = LuaCode.of(BudgetScript.TEXT);
        assertThat(code).contains("redis.call(").doesNotStartWith("--").doesNotContain("\n\n").doesNotContain(" \n");
        assertThat(code.length()).isLessThan(BudgetScript.TEXT.length());
        assertThat(LuaCode.of(code)).as("already code").isEqualTo(code);
    }
}
