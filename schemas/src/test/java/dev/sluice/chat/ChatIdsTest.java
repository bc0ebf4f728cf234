package dev.sluice.chat;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ChatIdsTest {
    @Test
    void trimsAndLowerCasesUsernamesOnly() {
        assertThat(ChatIds.normalise(" -1001234 ")).isEqualTo("-1001234");
        assertThat(ChatIds.normalise("\t@MyGroup\n")).isEqualTo("@mygroup");
        assertThat(ChatIds.normalise("@mygroup")).isEqualTo(ChatIds.normalise("@MyGroup"));
        assertThat(ChatIds.normalise("User@Example.com")).as("another provider's recipient keeps its case").isEqualTo("User@Example.com");
        assertThat(ChatIds.normalise(null)).isNull();
    }

    @Test
    void groupsAreNegativeIdsOrUsernamesAfterTrimming() {
        assertThat(ChatIds.isGroupOrChannel(" -1001234")).isTrue();
        assertThat(ChatIds.isGroupOrChannel("@Chan")).isTrue();
        assertThat(ChatIds.isGroupOrChannel("42")).isFalse();
    }
}
