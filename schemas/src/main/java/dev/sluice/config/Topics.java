package dev.sluice.config;

import java.util.List;

/**
 * Every topic name Sluice uses, each configurable (DESIGN.md, Flow). Keys of all topics are the chat
 * id as a string.
 *
 * @param notifications      live notification events from producers ({@code topic.notifications})
 * @param notificationsBackfill replayed / backfill notifications ({@code topic.notifications.backfill})
 * @param dlq                invalid records with the reason in headers ({@code topic.notifications.dlq})
 * @param outboxLive         messages ready to send, live ({@code topic.outbox.live})
 * @param outboxBackfill     messages ready to send, backfill ({@code topic.outbox.backfill})
 * @param deliveryResults    one terminal result per message ({@code topic.delivery.results})
 * @param chatEvents         chat status changes: wrote, blocked, migrated ({@code topic.chat.events})
 * @param senderStatus       compacted per-bot backlog and drain rate from senders ({@code topic.sender.status})
 * @param preferences        compacted per-user preferences such as digest opt-out ({@code topic.preferences})
 * @param outboxDlq          outbox records a sender can never read, with the reason in headers
 *                           ({@code topic.outbox.dlq})
 * @param deliveryParts      one result per part of a split notification ({@code text.too.long=split}), written by the
 *                           senders and folded by the topology into the notification's one result on
 *                           {@code deliveryResults} ({@code topic.delivery.parts})
 */
public record Topics(String notifications, String notificationsBackfill, String dlq, String outboxLive,
                     String outboxBackfill, String deliveryResults, String chatEvents, String senderStatus,
                     String preferences, String outboxDlq, String deliveryParts) {

    public static final String NOTIFICATIONS = "topic.notifications";
    public static final String NOTIFICATIONS_BACKFILL = "topic.notifications.backfill";
    public static final String DLQ = "topic.notifications.dlq";
    public static final String OUTBOX_LIVE = "topic.outbox.live";
    public static final String OUTBOX_BACKFILL = "topic.outbox.backfill";
    public static final String DELIVERY_RESULTS = "topic.delivery.results";
    public static final String CHAT_EVENTS = "topic.chat.events";
    public static final String SENDER_STATUS = "topic.sender.status";
    public static final String PREFERENCES = "topic.preferences";
    public static final String OUTBOX_DLQ = "topic.outbox.dlq";
    public static final String DELIVERY_PARTS = "topic.delivery.parts";

    public static Topics defaults() {
        return from(Settings.empty());
    }

    public static Topics from(Settings s) {
        return new Topics(
                s.string(NOTIFICATIONS, "notifications"),
                s.string(NOTIFICATIONS_BACKFILL, "notifications.backfill"),
                s.string(DLQ, "notifications.dlq"),
                s.string(OUTBOX_LIVE, "outbox.live"),
                s.string(OUTBOX_BACKFILL, "outbox.backfill"),
                s.string(DELIVERY_RESULTS, "delivery.results"),
                s.string(CHAT_EVENTS, "chat.events"),
                s.string(SENDER_STATUS, "sender.status"),
                s.string(PREFERENCES, "preferences"),
                s.string(OUTBOX_DLQ, "outbox.dlq"),
                s.string(DELIVERY_PARTS, "delivery.parts"));
    }

    /** All topics, for creating them up front (the demo, tests). */
    public List<String> all() {
        return List.of(notifications, notificationsBackfill, dlq, outboxLive, outboxBackfill, deliveryResults,
                chatEvents, senderStatus, preferences, outboxDlq, deliveryParts);
    }

    /** Topics that are compacted (latest value per key matters). */
    public List<String> compacted() {
        return List.of(senderStatus, preferences);
    }
}
