package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.chat.ChatIds;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.idempotency.SentMarks;
import dev.sluice.sender.idempotency.SentMarksUnavailableException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A message's result: builds its {@link DeliveryResult} and hands it to the {@link ResultSink}, and replays the
 * result of a message that was sent before (its sent mark, read here or in the budget's decision) instead of
 * sending it again.
 *
 * <p>Thread-safe: no state of its own but the result lookup, set once at wiring before any message is processed
 * (volatile). Any sending thread calls it; the {@link PendingMessage} it changes is owned by the thread holding that
 * lane's head.
 */
final class Outcomes {
    private static final Logger log = LoggerFactory.getLogger(Outcomes.class);
    /** Set by the topology on a message it re-addressed to a migrated group's new id: the chat id the producer used. */
    static final String MIGRATED_FROM_ATTRIBUTE = "sluice.migrated_from_chat_id";
    /**
     * Set by {@code sluice replay} on a notification it re-creates from a result: when the replay was made (epoch ms). A
     * mark written before it is an earlier attempt's ({@link #replay}).
     */
    static final String REPLAYED_AT_ATTRIBUTE = "sluice.replayed.at";
    /** Interval of the "sent mark unreadable" summary line while Redis is down. */
    static final long UNREADABLE_MARK_WARN_INTERVAL_MS = 10_000;
    /** Every message meets an unreadable sent mark while Redis is down: one line per interval, not one per message. */
    private final ThrottledWarning unreadableMark =
            new ThrottledWarning(log, UNREADABLE_MARK_WARN_INTERVAL_MS, System::currentTimeMillis);
    /** A Redis outage fails every message's sent mark: one line per interval, not one per message. */
    private final ThrottledWarning unwritableMark =
            new ThrottledWarning(log, UNREADABLE_MARK_WARN_INTERVAL_MS, System::currentTimeMillis);
    /** A producer reusing ids would log one line per message: one per interval. */
    private final ThrottledWarning reusedId =
            new ThrottledWarning(log, UNREADABLE_MARK_WARN_INTERVAL_MS, System::currentTimeMillis);

    private final ResultSink results;
    private final SentMarks sentMarks;
    private final ChatRegistry chats;
    private final SenderMetrics metrics;
    private final Clock clock;
    private final String instanceId;
    private volatile ResultLookup resultLookup = ResultLookup.NONE;

    Outcomes(ResultSink results, SentMarks sentMarks, ChatRegistry chats, SenderMetrics metrics, Clock clock,
             String instanceId) {
        this.results = Objects.requireNonNull(results);
        this.sentMarks = Objects.requireNonNull(sentMarks);
        this.chats = Objects.requireNonNull(chats);
        this.metrics = Objects.requireNonNull(metrics);
        this.clock = Objects.requireNonNull(clock);
        this.instanceId = instanceId;
    }

    /** Where a redelivered message marked sent (not result-written) looks for the result of its previous owner. */
    void resultLookup(ResultLookup lookup) {
        this.resultLookup = Objects.requireNonNull(lookup);
    }

    /** Writes the message's result and returns {@link Step#DONE}: the head leaves its lane. */
    Step finish(PendingMessage p, DeliveryStatus status, String reason, Integer errorCode, Long providerMessageId) {
        OutboundMessage m = p.message();
        String target = chats.resolve(m.getChatId());
        String original = ChatIds.normalise(m.getChatId()); // a migration is reported under the old id (issue 16, F11)
        String bot = p.lastBotId() == null ? m.getBotId() : p.lastBotId();
        DeliveryResult r = DeliveryResult.newBuilder()
                .setMessageId(m.getId())
                .setBotId(bot)
                .setChatId(original)
                .setStatus(status)
                .setEventClass(m.getEventClass())
                .setLane(m.getLane())
                .setReason(reason)
                .setErrorCode(errorCode)
                .setProviderMessageId(providerMessageId)
                .setAttempts(p.attempts())
                .setDueAt(m.getDueAt())
                .setSentAt(p.lastSentAtMs() < 0 ? null : Instant.ofEpochMilli(p.lastSentAtMs()))
                .setResultAt(Instant.ofEpochMilli(clock.millis()))
                .setDigestCount(m.getDigestCount())
                .setFoldedIds(List.copyOf(m.getFoldedIds()))
                .setMigratedToChatId(target.equals(original) ? null : target)
                .setSenderInstance(instanceId)
                .setPart(m.getPart()) // a part's result goes to delivery.parts (KafkaResultSink)
                .build();
        metrics.result(status, m.getEventClass());
        results.emit(p, r);
        return Step.DONE;
    }

    /** FAILED without a call: none of the message's bots has a token in this sender. */
    Step noBot(PendingMessage p) {
        OutboundMessage m = p.message();
        return finish(p, DeliveryStatus.FAILED, "no token configured for bot '" + m.getBotId() + "'"
                + (m.getBotPool().isEmpty() ? "" : " nor for any bot of its pool " + m.getBotPool()), null, null);
    }

    /** SKIPPED_INACTIVE without a call: the chat blocked the bot (or every bot of its pool) earlier. */
    Step inactive(PendingMessage p, String target) {
        return finish(p, DeliveryStatus.SKIPPED_INACTIVE, "chat " + target
                + " blocked the bot or was deactivated (403 seen by this sender); not sent", null, null);
    }

    /**
     * A message the provider already accepted whose result step failed (an exception while building or writing
     * it): its result again, never a second provider call.
     */
    Step resultOfAccepted(PendingMessage p) {
        String reason = p.acceptedAs() == DeliveryStatus.UNCERTAIN
                ? "no answer after the request was sent; may have been delivered, not resent" : null;
        return finish(p, p.acceptedAs(), reason, null, p.acceptedProviderMessageId());
    }

    /**
     * A redelivered message already marked sent is not sent again: SENT → the result the previous owner could
     * not write; RESULT_WRITTEN → no second result. If the store is unreachable the message is sent (the
     * budget decides whether anything is sent at all while Redis is down).
     *
     * @return DONE when the message was sent before, else null (go on)
     */
    Step checkSentMark(PendingMessage p) {
        OutboundMessage m = p.message();
        SentMarks.Mark mark;
        try {
            mark = sentMarks.get(m.getBotId(), m.getId());
        } catch (SentMarksUnavailableException e) {
            metrics.redisError("connection");
            unreadableMark.warn("sent mark of " + m.getId() + " unreadable (" + e.getMessage()
                    + "); sending without the idempotency check");
            mark = SentMarks.Mark.NONE;
        }
        p.sentMarkChecked(true);
        return replay(p, mark);
    }

    /**
     * The step for a message whose mark was read (here, or by the budget's Lua decision: its ALREADY_SENT carries the
     * mark's value): DONE or its result when it was sent before, else null. A mark written for another chat (its result
     * key, when it has one: marks of older versions have none) is no redelivery: FAILED, not sent ({@link #sameChat}).
     */
    Step replay(PendingMessage p, SentMarks.Mark mark) {
        OutboundMessage m = p.message();
        if (mark.state() != SentMarks.State.NONE && mark.resultKey() != null && !sameChat(mark.resultKey(), m)) {
            reusedId.warn("id " + m.getId() + " of bot " + m.getBotId() + " is marked " + mark.state()
                    + " for another chat: ended FAILED, not sent (ids are idempotency keys, unique per bot)");
            return finish(p, DeliveryStatus.FAILED, "id " + m.getId() + " was already used for another chat of bot "
                    + m.getBotId() + " within the sent marks' TTL; ids are idempotency keys, unique per bot; not sent",
                    null, null);
        }
        long replayedAt = replayedAtMs(m);
        if (replayedAt > 0 && mark.state() != SentMarks.State.NONE && mark.atMs() < replayedAt) {
            return replayOverEarlierAttempt(p, mark);
        }
        switch (mark.state()) {
            case RESULT_WRITTEN -> {
                results.alreadyFinished(p);
                return Step.DONE;
            }
            case SENT -> {
                if (resultLookup.hasResult(mark.resultKey(), m.getId(), mark.atMs())) {
                    // The previous owner wrote the result and died before raising the key: no second result.
                    log.info("result of {} was written by the previous owner (found on the results topic)", m.getId());
                    results.alreadyFinished(p);
                    return Step.DONE;
                }
                log.info("{} was sent by the previous owner, which left no result: writing it, not sending", m.getId());
                DeliveryStatus status = "UNCERTAIN".equals(mark.status()) ? DeliveryStatus.UNCERTAIN
                        : DeliveryStatus.DELIVERED;
                return finish(p, status, "already sent before a redelivery (idempotency key " + m.getId()
                        + "); not sent again", null, mark.providerMessageId());
            }
            case IN_FLIGHT -> {
                // Granted by an owner that left no result: sent or not, nobody knows (Telegram has no idempotency
                // key). A result on the topic settles it; else it is sent, as a message without a mark would be.
                if (resultLookup.hasResult(mark.resultKey(), m.getId(), mark.atMs())) {
                    log.info("result of {} was written by the previous owner (found on the results topic)", m.getId());
                    results.alreadyFinished(p);
                    return Step.DONE;
                }
                log.info("{} was granted to the previous owner, which left no result: sending it (a duplicate at the "
                        + "provider if that owner's call had gone out)", m.getId());
                return null;
            }
            default -> {
                return null;
            }
        }
    }

    /**
     * A message {@code sluice replay} re-created meets the mark of an earlier attempt (written before the replay): the
     * replay is a new attempt, with its own result. Left in flight (granted, then ended without an acceptance: FAILED,
     * EXPIRED — their marks stay FLIGHT): sent. Accepted, or maybe accepted (SENT, DONE): never sent again; the replay's
     * result says so (found from outside: such a replay ended with no result at all, and nothing sent, while the CLI
     * reported it written).
     */
    private Step replayOverEarlierAttempt(PendingMessage p, SentMarks.Mark mark) {
        OutboundMessage m = p.message();
        if (mark.state() == SentMarks.State.IN_FLIGHT) {
            log.info("{} is a replay; its earlier attempt ended unsent: sending it", m.getId());
            return null;
        }
        DeliveryStatus status = "UNCERTAIN".equals(mark.status()) ? DeliveryStatus.UNCERTAIN : DeliveryStatus.DELIVERED;
        return finish(p, status, "replay of " + m.getId() + ": an earlier attempt was " + (status == DeliveryStatus.UNCERTAIN
                ? "maybe delivered" : "delivered") + " (idempotency key); not sent again", null, mark.providerMessageId());
    }

    /** The message's {@value #REPLAYED_AT_ATTRIBUTE}, or 0 (not a replay, or unreadable). */
    static long replayedAtMs(OutboundMessage m) {
        String v = m.getAttributes() == null ? null : m.getAttributes().get(REPLAYED_AT_ATTRIBUTE);
        if (v == null) {
            return 0;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * Whether a mark's result key names this message's chat: its normalised chat id (the result's key, also when the
     * sender re-targets a migrated group, which changes only the target), or the chat the topology re-addressed it from
     * ({@value #MIGRATED_FROM_ATTRIBUTE}: the same notification, sent before the group migrated).
     */
    static boolean sameChat(String resultKey, OutboundMessage m) {
        if (resultKey.equals(ChatIds.normalise(m.getChatId()))) {
            return true;
        }
        String from = m.getAttributes() == null ? null : m.getAttributes().get(MIGRATED_FROM_ATTRIBUTE);
        return from != null && resultKey.equals(ChatIds.normalise(from));
    }

    /**
     * Records in the sent marks that the provider accepted (or may have accepted) the message: synchronously, unless
     * its grant wrote the in-flight mark (then the SENT mark rides on a later budget call of the bot, see
     * {@code RedisSentMarks#markSentLater}).
     */
    void markSent(PendingMessage p, DeliveryStatus status, Long providerMessageId) {
        try {
            if (p.inFlightMarked()) {
                sentMarks.markSentLater(p.message().getBotId(), p.message().getId(), status.name(), providerMessageId,
                        clock.millis(), ChatIds.normalise(p.message().getChatId()));
                return;
            }
            sentMarks.markSent(p.message().getBotId(), p.message().getId(), status.name(), providerMessageId,
                    clock.millis(), ChatIds.normalise(p.message().getChatId())); // the result's key
        } catch (SentMarksUnavailableException e) {
            metrics.redisError("connection");
            unwritableMark.warn("could not mark " + p.message().getId() + " as sent (" + e.getMessage()
                    + "); a redelivery after a crash could send it again");
        }
    }
}
