package dev.sluice.chat;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link Identifiers#escape}, the one escaping rule of every tool's line: control characters and line separators, and
 * the format characters that make a value read as another on a terminal (a bidi override reverses the rest of the line;
 * a zero-width space makes "1001" and "10\u200B01" look the same), become visible escapes; other text is kept.
 */
class IdentifiersEscapeTest {
    @Test
    void controlAndFormatCharactersAreEscapedOtherTextIsKept() {
        assertThat(Identifiers.escape("a\nb\\c\u0007")).isEqualTo("a\\nb\\\\c\\u0007");
        assertThat(Identifiers.escape("id-\u202Etxt.exe")).isEqualTo("id-\\u202Etxt.exe");
        assertThat(Identifiers.escape("10\u200B01")).isEqualTo("10\\u200B01");
        assertThat(Identifiers.escape("\u2066x\u2069\uFEFF")).isEqualTo("\\u2066x\\u2069\\uFEFF");
        // above U+FFFF (found from outside: printed raw): a tag character, and a musical format character
        assertThat(Identifiers.escape("tag-\uDB40\uDC41x")).isEqualTo("tag-\\uDB40\\uDC41x");
        assertThat(Identifiers.escape("beam-\uD834\uDD73")).isEqualTo("beam-\\uD834\\uDD73");
        assertThat(Identifiers.escape("a\u3164b\u115F")).isEqualTo("a\\u3164b\\u115F");
        assertThat(Identifiers.escape("Zürich ✓ 日本 \uD83D\uDE00")).isEqualTo("Zürich ✓ 日本 \uD83D\uDE00");
        assertThat(Identifiers.escape("plain")).isSameAs("plain");
        // a whole error line: what is escaped stays as it is, what is not is escaped now (found from outside: produce
        // and budget status quoted bad input raw, NUL and ESC included)
        assertThat(Identifiers.escapeInvisible("field 'a\\u202Eb' (id e\u202E1): unexpected '{\u0000' x\u001B"))
                .isEqualTo("field 'a\\u202Eb' (id e\\u202E1): unexpected '{\\u0000' x\\u001B");
    }
}
