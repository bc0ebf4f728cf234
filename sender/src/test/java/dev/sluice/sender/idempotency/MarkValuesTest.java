package dev.sluice.sender.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The mark values as the sender writes them and as budget.lua reads them (the result key is the rest after 4 bars). */
class MarkValuesTest {

    /**
     * Review R3: a chat id holding '|' (any string an HTTP provider takes) came back from a mark cut at its first bar,
     * while budget.lua reads the whole rest: a genuine redelivery looked like another chat's message (FAILED "id used for
     * another chat"), and Lua and Java disagreed on which chat a mark is for.
     */
    @Test
    void a_result_key_with_bars_reads_back_whole_as_budget_lua_reads_it() {
        assertThat(MarkValues.parse(MarkValues.inFlight(1700000000000L, "team|ops")).resultKey()).isEqualTo("team|ops");
        SentMarks.Mark sent = MarkValues.parse("SENT|DELIVERED|17|1700000000000|a|b|c");
        assertThat(sent.state()).isEqualTo(SentMarks.State.SENT);
        assertThat(sent.providerMessageId()).isEqualTo(17L);
        assertThat(sent.atMs()).isEqualTo(1700000000000L);
        assertThat(sent.resultKey()).isEqualTo("a|b|c");
    }

    @Test
    void marks_of_older_versions_still_read() {
        assertThat(MarkValues.parse("DONE||").state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
        assertThat(MarkValues.parse("DONE||").resultKey()).isNull();
        assertThat(MarkValues.parse("DONE||||42").resultKey()).isEqualTo("42");
        assertThat(MarkValues.parse("DONE||||42").atMs()).isZero();
        assertThat(MarkValues.parse(null)).isEqualTo(SentMarks.Mark.NONE);
    }
}
