package dev.sluice.sender.telegram;

import com.pengrad.telegrambot.model.LinkPreviewOptions;
import com.pengrad.telegrambot.model.request.InlineKeyboardButton;
import com.pengrad.telegrambot.model.request.InlineKeyboardMarkup;
import com.pengrad.telegrambot.model.request.ParseMode;
import com.pengrad.telegrambot.request.AbstractSendRequest;
import com.pengrad.telegrambot.request.BaseRequest;
import com.pengrad.telegrambot.request.DeleteMessage;
import com.pengrad.telegrambot.request.EditMessageCaption;
import com.pengrad.telegrambot.request.EditMessageReplyMarkup;
import com.pengrad.telegrambot.request.EditMessageText;
import com.pengrad.telegrambot.request.SendAnimation;
import com.pengrad.telegrambot.request.SendAudio;
import com.pengrad.telegrambot.request.SendDocument;
import com.pengrad.telegrambot.request.SendMessage;
import com.pengrad.telegrambot.request.SendPhoto;
import com.pengrad.telegrambot.request.SendVideo;
import dev.sluice.avro.EditPart;
import dev.sluice.avro.InlineButton;
import dev.sluice.avro.InlineKeyboard;
import dev.sluice.avro.Media;
import java.util.LinkedHashMap;
import java.util.Map;
import dev.sluice.avro.OutboundMessage;
import java.util.List;

/**
 * Maps an {@link OutboundMessage} to the one Bot API method it needs (issue 20), as a pengrad request: {@code deleteMessage}
 * when {@code delete_of} is set; {@code editMessageText}, {@code editMessageCaption} or {@code editMessageReplyMarkup} when
 * {@code edit_of} is set (by {@code edit_part}); {@code sendPhoto}, {@code sendDocument}, {@code sendVideo},
 * {@code sendAnimation} or {@code sendAudio} with {@code media} (the text is the caption); else {@code sendMessage}. Sends
 * carry the inline keyboard, silence, content protection, forum topic and link-preview option. Stateless, pure.
 */
final class TelegramRequests {
    private TelegramRequests() {
    }

    /** The method's name, as Telegram spells it. */
    static String methodOf(OutboundMessage m) {
        if (m.getDeleteOf() != null) {
            return "deleteMessage";
        }
        if (m.getEditOf() != null) {
            EditPart part = m.getEditPart() == null ? EditPart.TEXT : m.getEditPart();
            return switch (part) {
                case TEXT -> "editMessageText";
                case CAPTION -> "editMessageCaption";
                case REPLY_MARKUP -> "editMessageReplyMarkup";
            };
        }
        if (m.getMedia() != null) {
            String type = m.getMedia().getType().name();
            return "send" + type.charAt(0) + type.substring(1).toLowerCase(java.util.Locale.ROOT);
        }
        return "sendMessage";
    }

    /**
     * @param chatId   the chat to call (the sender's resolved target, which may differ from the message's after a migration)
     * @param targetId the provider message id an edit or delete acts on ({@code target_provider_message_id})
     */
    static BaseRequest<?, ?> request(OutboundMessage m, String chatId, ParseMode mode, int targetId) {
        if (m.getDeleteOf() != null) {
            return new DeleteMessage(chatId, targetId);
        }
        if (m.getEditOf() != null) {
            return edit(m, chatId, mode, targetId);
        }
        if (m.getMedia() != null) {
            return options(media(m.getMedia(), chatId, m.getText(), mode), m);
        }
        SendMessage send = new SendMessage(chatId, m.getText());
        if (mode != null) {
            send.parseMode(mode);
        }
        if (m.getLinkPreviewDisabled()) {
            send.linkPreviewOptions(new LinkPreviewOptions().isDisabled(true));
        }
        return options(send, m);
    }

    /**
     * The parameters of a plain {@code sendMessage} (no delete, edit or media), in the order and with the values of the
     * pengrad request {@link #request} builds for it (plus {@code allow_paid_broadcast} when {@code paidBroadcast}, as
     * {@link TelegramTransport} adds it), without building that request: issue 19, pengrad's request constructors
     * compile a regex per parameter name on every message. Null for any other method.
     */
    static Map<String, Object> sendMessageParams(OutboundMessage m, String chatId, ParseMode mode, boolean paidBroadcast) {
        if (m.getDeleteOf() != null || m.getEditOf() != null || m.getMedia() != null || chatId == null
                || m.getText() == null) {
            return null;
        }
        Map<String, Object> p = new LinkedHashMap<>(16);
        p.put("chat_id", chatId);
        p.put("text", m.getText());
        if (mode != null) {
            p.put("parse_mode", mode);
        }
        if (m.getLinkPreviewDisabled()) {
            p.put("link_preview_options", new LinkPreviewOptions().isDisabled(true));
        }
        if (m.getDisableNotification()) {
            p.put("disable_notification", true);
        }
        if (m.getProtectContent()) {
            p.put("protect_content", true);
        }
        if (m.getMessageThreadId() != null) {
            p.put("message_thread_id", m.getMessageThreadId());
        }
        InlineKeyboardMarkup markup = keyboard(m.getReplyMarkup());
        if (markup != null) {
            p.put("reply_markup", markup);
        }
        if (paidBroadcast) {
            p.put("allow_paid_broadcast", true);
        }
        return p;
    }

    private static BaseRequest<?, ?> edit(OutboundMessage m, String chatId, ParseMode mode, int targetId) {
        InlineKeyboardMarkup markup = keyboard(m.getReplyMarkup());
        EditPart part = m.getEditPart() == null ? EditPart.TEXT : m.getEditPart();
        switch (part) {
            case CAPTION -> {
                EditMessageCaption r = new EditMessageCaption(chatId, targetId).caption(m.getText());
                if (mode != null) {
                    r.parseMode(mode);
                }
                return markup == null ? r : r.replyMarkup(markup);
            }
            case REPLY_MARKUP -> {
                // no markup: the keyboard is removed
                return new EditMessageReplyMarkup(chatId, targetId).replyMarkup(markup == null ? new InlineKeyboardMarkup() : markup);
            }
            default -> {
                EditMessageText r = new EditMessageText(chatId, targetId, m.getText());
                if (mode != null) {
                    r.parseMode(mode);
                }
                if (m.getLinkPreviewDisabled()) {
                    r.linkPreviewOptions(new LinkPreviewOptions().isDisabled(true));
                }
                return markup == null ? r : r.replyMarkup(markup);
            }
        }
    }

    private static AbstractSendRequest<?> media(Media media, String chatId, String caption, ParseMode mode) {
        String file = media.getUrl() != null ? media.getUrl() : media.getFileId();
        boolean hasCaption = caption != null && !caption.isEmpty();
        return switch (media.getType()) {
            case PHOTO -> {
                SendPhoto r = new SendPhoto(chatId, file);
                if (hasCaption) {
                    r.caption(caption);
                }
                yield mode == null ? r : r.parseMode(mode);
            }
            case DOCUMENT -> {
                SendDocument r = new SendDocument(chatId, file);
                if (hasCaption) {
                    r.caption(caption);
                }
                yield mode == null ? r : r.parseMode(mode);
            }
            case VIDEO -> {
                SendVideo r = new SendVideo(chatId, file);
                if (hasCaption) {
                    r.caption(caption);
                }
                yield mode == null ? r : r.parseMode(mode);
            }
            case ANIMATION -> {
                SendAnimation r = new SendAnimation(chatId, file);
                if (hasCaption) {
                    r.caption(caption);
                }
                yield mode == null ? r : r.parseMode(mode);
            }
            case AUDIO -> {
                SendAudio r = new SendAudio(chatId, file);
                if (hasCaption) {
                    r.caption(caption);
                }
                yield mode == null ? r : r.parseMode(mode);
            }
        };
    }

    private static <R extends AbstractSendRequest<R>> AbstractSendRequest<R> options(AbstractSendRequest<R> r, OutboundMessage m) {
        if (m.getDisableNotification()) {
            r.disableNotification(true);
        }
        if (m.getProtectContent()) {
            r.protectContent(true);
        }
        if (m.getMessageThreadId() != null) {
            r.messageThreadId(m.getMessageThreadId());
        }
        InlineKeyboardMarkup markup = keyboard(m.getReplyMarkup());
        if (markup != null) {
            r.replyMarkup(markup);
        }
        return r;
    }

    static InlineKeyboardMarkup keyboard(InlineKeyboard keyboard) {
        if (keyboard == null) {
            return null;
        }
        InlineKeyboardMarkup markup = new InlineKeyboardMarkup();
        for (List<InlineButton> row : keyboard.getRows()) {
            markup.addRow(row.stream().map(b -> {
                InlineKeyboardButton button = new InlineKeyboardButton(b.getText());
                return b.getUrl() != null ? button.url(b.getUrl()) : button.callbackData(b.getCallbackData());
            }).toArray(InlineKeyboardButton[]::new));
        }
        return markup;
    }
}
