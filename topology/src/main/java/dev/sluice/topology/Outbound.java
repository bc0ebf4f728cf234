package dev.sluice.topology;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.DigestEntry;
import dev.sluice.avro.EditPart;
import dev.sluice.avro.FoldedMeta;
import dev.sluice.avro.Lane;
import dev.sluice.avro.MessagePart;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Builds what the topology writes: single and digest OutboundMessages, and its own DeliveryResults. */
final class Outbound {
    /** {@code sender_instance} of the results the topology decides. */
    static final String TOPOLOGY_INSTANCE = "topology";
    /** Attribute set on a re-addressed message: the chat id the producer used. */
    static final String MIGRATED_FROM_ATTRIBUTE = "sluice.migrated_from_chat_id";

    private Outbound() {
    }

    /**
     * A notification sent on as itself; {@code due_at} = now (when the topology released it). Built with the all-args
     * constructor, field for field what the builder set (issue 21: the builder validated each field and deep-copied the
     * defaults of the two it left unset, once per routed notification); {@code target_provider_message_id} and
     * {@code part} are null, their schema defaults.
     */
    static OutboundMessage single(Notification n, NotificationClass eventClass, Lane lane, long nowMs) {
        return new OutboundMessage(n.getId(), n.getBotId(), n.getChatId(), n.getKind(), eventClass, lane, n.getText(),
                n.getParseMode(), n.getCreatedAt(), Instant.ofEpochMilli(nowMs), n.getExpiresAt(), 0, List.of(),
                new ArrayList<>(n.getBotPool()), new HashMap<>(n.getAttributes()), n.getReplyMarkup(), n.getDisableNotification(),
                n.getProtectContent(), n.getMessageThreadId(), n.getLinkPreviewDisabled(), n.getMedia(), n.getEditOf(),
                n.getEditOf() == null ? null : n.getEditPart() == null ? EditPart.TEXT : n.getEditPart(), n.getDeleteOf(),
                null, null);
    }

    /**
     * The digest of an entry: id {@link DigestEntry#getDigestId()} (fixed when the entry was opened, see
     * {@link DigestFolder}; entries written before it existed get {@code <lane>-digest-<first folded id>-<folded_at
     * ms>}), {@code digest_count} and {@code folded_ids} set, the
     * text saying what it folds plus the latest state, {@code created_at} of the first folded notification,
     * {@code expires_at} the earliest of its folded notifications' ({@link #earliestDeadline}; null when none has one):
     * the sender expires the digest rather than deliver any of them late. {@link DigestFolder} has taken out the ids
     * already past their deadline before building it.
     */
    static OutboundMessage digest(DigestEntry e, Lane lane, long nowMs) {
        Notification latest = e.getLatest();
        Map<String, String> attributes = new HashMap<>(latest.getAttributes());
        attributes.put("sluice.digest.first_at", e.getFirstAt().toString());
        attributes.put("sluice.digest.last_at", e.getLastAt().toString());
        return OutboundMessage.newBuilder()
                .setId(e.getDigestId() != null ? e.getDigestId()
                        : lane.name().toLowerCase() + "-digest-" + e.getFoldedIds().get(0) + "-" + e.getFoldedAt().toEpochMilli())
                .setBotId(e.getBotId())
                .setChatId(e.getChatId())
                .setKind(e.getKind())
                .setEventClass(e.getEventClass())
                .setLane(lane)
                .setText(digestText(e))
                .setParseMode(e.getCount() == 1 ? latest.getParseMode() : null)
                .setCreatedAt(e.getFirstAt())
                .setDueAt(Instant.ofEpochMilli(nowMs))
                .setExpiresAt(earliestDeadline(e))
                .setDigestCount(e.getCount())
                .setFoldedIds(new ArrayList<>(e.getFoldedIds()))
                .setBotPool(new ArrayList<>(latest.getBotPool()))
                .setAttributes(attributes)
                // what a message looks like is the latest's: its keyboard, media (the digest text is the caption),
                // topic and silence
                .setReplyMarkup(latest.getReplyMarkup())
                .setDisableNotification(latest.getDisableNotification())
                .setProtectContent(latest.getProtectContent())
                .setMessageThreadId(latest.getMessageThreadId())
                .setLinkPreviewDisabled(latest.getLinkPreviewDisabled())
                .setMedia(latest.getMedia())
                .build();
    }

    /**
     * What {@code e} keeps of each folded id, one per {@link DigestEntry#getFoldedIds()} in the same order. An entry
     * written before {@code folded} existed has none: its ids count as created at its {@code first_at} with no deadline,
     * except the last, which is its {@code latest} (whose times and class are known).
     */
    static List<FoldedMeta> folded(DigestEntry e) {
        List<FoldedMeta> folded = e.getFolded();
        int n = e.getFoldedIds().size();
        if (folded.size() == n) {
            return folded;
        }
        List<FoldedMeta> padded = new ArrayList<>(n);
        for (int i = 0; i < n - 1; i++) {
            padded.add(new FoldedMeta(e.getFirstAt(), null, e.getEventClass()));
        }
        if (n > 0) {
            padded.add(foldedMeta(e.getLatest(), e.getEventClass()));
        }
        return padded;
    }

    /** What a digest entry keeps of {@code n}, folded as {@code eventClass}. */
    static FoldedMeta foldedMeta(Notification n, NotificationClass eventClass) {
        return new FoldedMeta(n.getCreatedAt(), n.getExpiresAt(), eventClass);
    }

    /** The earliest {@code expires_at} of the notifications {@code e} folds, or null when none has one. */
    static Instant earliestDeadline(DigestEntry e) {
        Instant earliest = null;
        for (FoldedMeta m : folded(e)) {
            if (m.getExpiresAt() != null && (earliest == null || m.getExpiresAt().isBefore(earliest))) {
                earliest = m.getExpiresAt();
            }
        }
        return earliest;
    }

    /**
     * {@code "20 updates to task.updated task-42 (10:00:03Z to 10:00:41Z). Latest:\n<latest text>"}; the
     * latest text alone when one notification is folded. Plain text (no parse mode) because the latest text
     * may carry markup for a mode the header would break. At most {@link #maxTextLength} characters (4,096 for
     * sendMessage, 1,024 for a media caption): a longer text is cut and ends with {@code "… and N more characters"}.
     */
    static String digestText(DigestEntry e) {
        String latest = e.getLatest().getText();
        int max = maxTextLength(e.getLatest().getMedia() != null);
        if (e.getCount() == 1) {
            return bounded(latest, max);
        }
        String subject = e.getEntity() == null ? e.getKind() : e.getKind() + " " + e.getEntity();
        String header = e.getCount() + " updates to " + subject + " (" + e.getFirstAt() + " to " + e.getLastAt() + "). Latest:\n";
        return bounded(header + latest, max);
    }

    /** Telegram's bound on a message text (sendMessage, 4,096) or on a media caption (1,024), in characters. */
    static int maxTextLength(boolean media) {
        return media ? NotificationValidator.MAX_CAPTION_LENGTH : NotificationValidator.MAX_TEXT_LENGTH;
    }

    /**
     * {@code text} when it fits in {@code max} characters, else its start followed by {@code "… and N more characters"},
     * N the characters left out, the whole exactly {@code max} characters or fewer. Never splits a surrogate pair.
     */
    static String bounded(String text, int max) {
        if (text.length() <= max) {
            return text;
        }
        // the suffix's own length depends on N's digits: take the widest N can be
        String widest = "\u2026 and " + text.length() + " more characters";
        int keep = max - widest.length();
        if (keep > 0 && Character.isHighSurrogate(text.charAt(keep - 1))) {
            keep--;
        }
        keep = Math.max(0, keep);
        return text.substring(0, keep) + "\u2026 and " + (text.length() - keep) + " more characters";
    }

    /**
     * The messages {@code m} is sent as ({@code text.too.long=split}, node {@code <lane>-split-parts}): {@code m} itself
     * when its text fits in one message ({@link #maxTextLength}), or when it is not a send (an edit or a delete, which are
     * bounded at validation) or a digest (bounded by {@link #digestText}); else its parts in order
     * ({@link TextSplitter}: part 1 at most the caption limit when it carries media, every other at most 4,096), whatever
     * their number (validation bounded it by {@code text.split.max.parts}; a notification that waited in a store while
     * the setting changed is still split rather than failed).
     *
     * <p>Part k of n: id {@code <id>#k/n}, {@code part} = (k, n, id), the same chat, bot, class, lane, times, parse
     * mode, topic, protection and preview setting. Part 1 carries the media (its text is the caption) and the inline
     * keyboard, since the notification's one result names part 1's provider message id, so an edit or delete of the
     * notification acts on part 1. Parts 2..n are silent ({@code disable_notification}): one notification, one alert.
     * No part has a bot pool: all parts come from {@code bot_id}, in order.
     */
    static List<OutboundMessage> parts(OutboundMessage m) {
        if (m.getEditOf() != null || m.getDeleteOf() != null || m.getDigestCount() > 0 || m.getPart() != null
                || m.getText().length() <= maxTextLength(m.getMedia() != null)) {
            return List.of(m);
        }
        List<String> texts = TextSplitter.split(m.getText(), maxTextLength(m.getMedia() != null),
                NotificationValidator.MAX_TEXT_LENGTH, Integer.MAX_VALUE);
        if (texts.size() == 1) {
            m.setText(texts.get(0));
            return List.of(m);
        }
        int n = texts.size();
        List<OutboundMessage> parts = new ArrayList<>(n);
        for (int k = 1; k <= n; k++) {
            OutboundMessage.Builder b = OutboundMessage.newBuilder(m)
                    .setId(m.getId() + "#" + k + "/" + n)
                    .setText(texts.get(k - 1))
                    .setBotPool(new ArrayList<>())
                    .setAttributes(new HashMap<>(m.getAttributes()))
                    .setPart(MessagePart.newBuilder().setIndex(k).setCount(n).setParentId(m.getId()).build());
            if (k > 1) {
                b.setMedia(null).setReplyMarkup(null).setDisableNotification(true);
            }
            parts.add(b.build());
        }
        return parts;
    }

    /**
     * The FAILED result of a dead-lettered notification whose id could be read: {@code chat_id} (normalised, or
     * empty when missing) and {@code bot_id} as far as they could be read, the DLQ reason, no provider call.
     */
    static DeliveryResult deadLettered(String id, String botId, String chatId, NotificationClass eventClass, Lane lane,
                                       String dlqTopic, String reason, long nowMs) {
        return DeliveryResult.newBuilder()
                .setMessageId(id)
                .setBotId(botId == null ? "" : botId)
                .setChatId(chatId == null ? "" : chatId)
                .setStatus(DeliveryStatus.FAILED)
                .setEventClass(eventClass)
                .setLane(lane)
                .setReason("dead-lettered to " + dlqTopic + ": " + reason)
                .setAttempts(0)
                .setResultAt(Instant.ofEpochMilli(nowMs))
                .setDigestCount(0)
                .setFoldedIds(List.of())
                .setSenderInstance(TOPOLOGY_INSTANCE)
                .build();
    }

    /** A result the topology decides (EXPIRED, SKIPPED_INACTIVE): no provider call, no budget spent. */
    static DeliveryResult result(Notification n, NotificationClass eventClass, Lane lane, DeliveryStatus status,
                                 String reason, long nowMs) {
        return result(n.getId(), n.getBotId(), n.getChatId(), eventClass, lane, status, reason, nowMs);
    }

    /**
     * The same, for notification {@code id} to {@code chatId} from {@code botId}: e.g. the EXPIRED result of an id a
     * digest entry folded ({@link DigestFolder}), which keeps its id but not the notification.
     */
    static DeliveryResult result(String id, String botId, String chatId, NotificationClass eventClass, Lane lane,
                                 DeliveryStatus status, String reason, long nowMs) {
        return DeliveryResult.newBuilder()
                .setMessageId(id)
                .setBotId(botId)
                .setChatId(chatId)
                .setStatus(status)
                .setEventClass(eventClass)
                .setLane(lane)
                .setReason(reason)
                .setAttempts(0)
                .setResultAt(Instant.ofEpochMilli(nowMs))
                .setDigestCount(0)
                .setFoldedIds(List.of())
                .setSenderInstance(TOPOLOGY_INSTANCE)
                .build();
    }
}
