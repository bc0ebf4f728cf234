package dev.sluice.topology;

import dev.sluice.avro.ChatEvent;
import dev.sluice.chat.Identifiers;

/**
 * The ids a {@code chat.events} record must have ({@link Identifiers}' rules), checked by the topology's chat-status
 * reader (a record that breaks them is logged and skipped: that topic has no dead letters) and by
 * {@code sluice chat-event} before it writes one (a usage error). Pure and stateless.
 */
public final class ChatEventValidator {
    /** A broken rule: the field ({@code key}, {@code chat_id}, {@code new_chat_id} or {@code bot_id}) and why. */
    public record Problem(String field, String message) {
        @Override
        public String toString() {
            return message;
        }
    }

    private ChatEventValidator() {
    }

    /**
     * @param key the record key (the chat id), may be null
     * @return the first broken rule, its message naming the field and its value escaped; null when none is. The bot id is
     *     checked as the reader uses it: stripped, {@code *} or blank meaning every bot.
     */
    public static Problem problem(String key, ChatEvent e) {
        String[][] fields = {{"chat_id", e.getChatId()}, {"new_chat_id", e.getNewChatId()}, {"key", key}};
        for (String[] f : fields) {
            if (f[1] != null && Identifiers.hasControlCharacter(f[1])) {
                return new Problem(f[0], "field " + f[0] + " '" + Identifiers.escape(NotificationValidator.shortened(f[1]))
                        + "' contains a control character");
            }
        }
        String bot = e.getBotId();
        if (!ChatStatusTable.everyBot(bot) && !Identifiers.isBotId(bot.strip())) {
            return new Problem("bot_id", "field bot_id '" + Identifiers.escape(NotificationValidator.shortened(bot))
                    + "' is not a bot id: expected '*' or " + Identifiers.BOT_ID_RULE);
        }
        return null;
    }
}
