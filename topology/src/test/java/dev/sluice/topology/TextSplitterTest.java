package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class TextSplitterTest {

    @Test
    void aTextThatFitsIsOnePartUnchanged() {
        assertThat(TextSplitter.split("  short  ", 10, 10, 3)).containsExactly("  short  ");
        assertThat(TextSplitter.split("x".repeat(4096), 4096, 4096, 10)).containsExactly("x".repeat(4096));
    }

    @Test
    void cutsAtTheLastParagraphBreakBeforeLineAndWordBreaks() {
        String p1 = "a".repeat(30) + "\n" + "b".repeat(20); // 51, with a line break at 30
        String p2 = "c".repeat(10) + " " + "d".repeat(10);
        String text = p1 + "\n\n" + p2;
        assertThat(TextSplitter.split(text, 60, 60, 5)).containsExactly(p1, p2);
    }

    @Test
    void aBlankLineWithSpacesIsAParagraphBreakToo() {
        String text = "a".repeat(40) + "\n  \t\n" + "b".repeat(40);
        assertThat(TextSplitter.split(text, 50, 50, 5)).containsExactly("a".repeat(40), "b".repeat(40));
    }

    @Test
    void withoutAParagraphBreakCutsAtTheLastLineBreak() {
        String text = "one two three\nfour five six\nseven eight";
        assertThat(TextSplitter.split(text, 30, 30, 5)).containsExactly("one two three\nfour five six", "seven eight");
    }

    @Test
    void withoutLineBreaksCutsAtTheLastWordBoundaryAndDropsTheSpace() {
        String text = "alpha beta gamma delta epsilon zeta eta theta";
        List<String> parts = TextSplitter.split(text, 20, 20, 5);
        assertThat(parts).containsExactly("alpha beta gamma", "delta epsilon zeta", "eta theta");
        assertThat(String.join(" ", parts)).isEqualTo(text);
    }

    @Test
    void aBreakRightAtTheLimitIsUsedSoAPartCanBeExactlyFull() {
        String text = "a".repeat(10) + " " + "b".repeat(5);
        assertThat(TextSplitter.split(text, 10, 10, 5)).containsExactly("a".repeat(10), "b".repeat(5));
    }

    @Test
    void anEarlyParagraphBreakLosesToALateWordBoundary() {
        // the paragraph break is in the first half of the window: a word boundary near the limit wins (no tiny parts)
        String text = "ab\n\n" + "c".repeat(40) + " " + "d".repeat(50);
        assertThat(TextSplitter.split(text, 60, 60, 5)).containsExactly("ab\n\n" + "c".repeat(40), "d".repeat(50));
    }

    @Test
    void aWordLongerThanAPartIsCutHardAtTheLimit() {
        String text = "x".repeat(25);
        assertThat(TextSplitter.split(text, 10, 10, 5)).containsExactly("x".repeat(10), "x".repeat(10), "x".repeat(5));
    }

    @Test
    void aHardCutNeverSplitsASurrogatePair() {
        String emoji = "\uD83D\uDE00"; // one code point, two UTF-16 units
        String text = "x".repeat(9) + emoji + "y".repeat(5); // a cut at 10 would fall between the two units
        List<String> parts = TextSplitter.split(text, 10, 10, 5);
        assertThat(parts).containsExactly("x".repeat(9), emoji + "y".repeat(5));
        for (String p : parts) {
            assertThat(p.length()).isLessThanOrEqualTo(10);
            assertThat(Character.isLowSurrogate(p.charAt(0))).isFalse();
            assertThat(Character.isHighSurrogate(p.charAt(p.length() - 1))).isFalse();
        }
        assertThat(String.join("", parts)).isEqualTo(text);
    }

    @Test
    void aTextOfOnlyEmojiIsCutBetweenCodePoints() {
        String text = "\uD83D\uDE00".repeat(5000); // 10,000 units, no whitespace
        List<String> parts = TextSplitter.split(text, 4096, 4096, 10);
        assertThat(parts).hasSize(3).allSatisfy(p -> {
            assertThat(p.length()).isLessThanOrEqualTo(4096);
            assertThat(p.codePoints().allMatch(c -> c == 0x1F600)).isTrue();
        });
        assertThat(String.join("", parts)).isEqualTo(text);
    }

    @Test
    void theFirstPartMayHaveItsOwnLimitForACaption() {
        String text = ("word ").repeat(1000).trim(); // 4999 characters
        List<String> parts = TextSplitter.split(text, 1024, 4096, 10);
        assertThat(parts).hasSize(2);
        assertThat(parts.get(0).length()).isLessThanOrEqualTo(1024).isGreaterThan(1000);
        assertThat(parts.get(1).length()).isLessThanOrEqualTo(4096);
        assertThat(parts.get(0) + " " + parts.get(1)).isEqualTo(text);
    }

    @Test
    void moreThanMaxPartsGivesNoParts() {
        String text = "x".repeat(41);
        assertThat(TextSplitter.split(text, 10, 10, 4)).isEmpty();
        assertThat(TextSplitter.split(text, 10, 10, 5)).hasSize(5);
    }

    @Test
    void nineThousandCharactersOfParagraphsAreThreePartsWithinTheLimit() {
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (b.length() < 9000) {
            b.append("Paragraph ").append(i++).append(": ").append("lorem ipsum dolor sit amet ".repeat(8).trim()).append("\n\n");
        }
        String text = b.substring(0, 9000).trim();
        List<String> parts = TextSplitter.split(text, 4096, 4096, 10);
        assertThat(parts).hasSize(3).allSatisfy(p -> {
            assertThat(p.length()).isBetween(1, 4096);
            assertThat(p).doesNotStartWith("\n").doesNotEndWith("\n").doesNotEndWith(" ");
        });
        assertThat(String.join("\n\n", parts)).isEqualTo(text);
    }

    @Test
    void refusesLimitsTooSmallToMakeProgress() {
        assertThatThrownBy(() -> TextSplitter.split("abc", 1, 10, 3)).isInstanceOf(IllegalArgumentException.class);
    }
}
