package dev.sluice.sender.budget;

import dev.sluice.chat.ChatIds;

import dev.sluice.avro.Lane;
import java.time.Duration;
import java.util.Objects;

/**
 * One message asking for budget.
 *
 * @param botId      logical bot id ({@link BudgetKeys#BOT_ID}); never the token
 * @param chatId     the chat id as a string (normalised); negative ids and {@code @username}s are groups
 * @param lane       {@link Lane#LIVE} or {@link Lane#BACKFILL}: backfill only uses budget above the live headroom
 * @param sentMarkId the message id (idempotency key) whose sent mark the decision should read in the same
 *                   round trip, or null; only a budget with {@link BudgetPort#sentMarksRedisUrl()} reads it
 * @param reserveUpTo when positive (live only): if only the bot's global limit refuses and it would pass within
 *                    this time, the budget may grant the next free slot instead ({@link Decision#isReservation()});
 *                    {@link Duration#ZERO}: refuse as usual. The Redis budget reserves; others refuse.
 * @param inFlight    the in-flight mark a budget that carries sent-mark writes ({@link BudgetPort#foldMarkWrites})
 *                    writes in the same call when, and only when, it grants ({@link Decision#inFlightMarked()});
 *                    null: none. Same message as {@code sentMarkId} when both are given.
 * @param urgent      the message goes ahead of routine work (CRITICAL, or the head of a lane holding one): it may
 *                    reserve as far as {@code reserveUpTo}, and its grant holds the bot's routine requests, on every
 *                    sender, to {@link BudgetConfig#reservationRoutineMax()} for
 *                    {@link BudgetConfig#reservationCriticalMemory()}; a routine request reserves up to
 *                    {@code reserveUpTo} otherwise. Only the Redis budget reads it.
 */
public record BudgetRequest(String botId, String chatId, Lane lane, String sentMarkId, Duration reserveUpTo,
                            InFlight inFlight, boolean urgent) {

    /**
     * The in-flight mark a grant writes: message {@code messageId}'s sent mark becomes {@code value}.
     *
     * @param exclusive the grant is refused (answered ALREADY_SENT with the stored mark) when the message's mark holds
     *                  another result key (another chat: the id was used for another chat, see {@code Outcomes#replay}),
     *                  so two chats' messages with one id are never both sent, whichever read the mark first; and when
     *                  it holds a settled mark (SENT, DONE) of its own chat written at or after {@code settledFromMs}:
     *                  a copy whose twin was sent after this copy read the mark is not sent again. Off for a message
     *                  the topology re-addressed after a migration: its old chat's mark is its own
     * @param settledFromMs with {@code exclusive}: the settled marks that refuse the grant, by their time; 0 = any, a
     *                      replay's {@code sluice.replayed.at} (marks before it are an earlier attempt's, sent again)
     */
    public record InFlight(String messageId, String value, boolean exclusive, long settledFromMs) {
        public InFlight {
            if (messageId == null || messageId.isEmpty() || value == null) {
                throw new IllegalArgumentException("an in-flight mark needs a message id and a value");
            }
            if (settledFromMs < 0) {
                throw new IllegalArgumentException("settledFromMs: must be >= 0, got " + settledFromMs);
            }
        }

        /** Refusing any settled mark of its own chat ({@code settledFromMs} 0) when exclusive. */
        public InFlight(String messageId, String value, boolean exclusive) {
            this(messageId, value, exclusive, 0);
        }
    }

    public BudgetRequest {
        chatId = ChatIds.normalise(chatId); // issue 16: " -100…" and "@Name"/"@name" are one chat, one budget
        BudgetKeys.tag(botId); // validates the bot id
        if (chatId == null || chatId.isEmpty()) {
            throw new IllegalArgumentException("chatId: must not be empty, got '" + chatId + "'");
        }
        Objects.requireNonNull(lane, "lane");
        if (sentMarkId != null && sentMarkId.isEmpty()) {
            throw new IllegalArgumentException("sentMarkId: must not be empty when given");
        }
        if (inFlight != null && sentMarkId != null && !inFlight.messageId().equals(sentMarkId)) {
            throw new IllegalArgumentException("inFlight: another message than sentMarkId");
        }
        if (reserveUpTo == null || reserveUpTo.isNegative()) {
            throw new IllegalArgumentException("reserveUpTo: must be zero or positive, got " + reserveUpTo);
        }
    }

    public BudgetRequest(String botId, String chatId, Lane lane, String sentMarkId, Duration reserveUpTo) {
        this(botId, chatId, lane, sentMarkId, reserveUpTo, null, false);
    }

    /** A request that does not look at sent marks and never takes a reservation. */
    public BudgetRequest(String botId, String chatId, Lane lane) {
        this(botId, chatId, lane, null, Duration.ZERO);
    }

    /** A live request. */
    public static BudgetRequest live(String botId, String chatId) {
        return new BudgetRequest(botId, chatId, Lane.LIVE);
    }

    /** A backfill request. */
    public static BudgetRequest backfill(String botId, String chatId) {
        return new BudgetRequest(botId, chatId, Lane.BACKFILL);
    }

    /** This request, also asking whether message {@code messageId} was already sent. */
    public BudgetRequest checkingSentMark(String messageId) {
        return new BudgetRequest(botId, chatId, lane, messageId, reserveUpTo, inFlight, urgent);
    }

    /**
     * This request, also writing message {@code messageId}'s in-flight mark {@code value} if granted; refused instead
     * when the stored mark names another chat ({@link InFlight#exclusive()}).
     */
    public BudgetRequest markingInFlight(String messageId, String value) {
        return markingInFlight(messageId, value, true);
    }

    /** As {@link #markingInFlight(String, String)}; {@code exclusive} false writes over any stored mark. */
    public BudgetRequest markingInFlight(String messageId, String value, boolean exclusive) {
        return markingInFlight(messageId, value, exclusive, 0);
    }

    /** As {@link #markingInFlight(String, String, boolean)}, refusing settled marks from {@code settledFromMs} on. */
    public BudgetRequest markingInFlight(String messageId, String value, boolean exclusive, long settledFromMs) {
        return new BudgetRequest(botId, chatId, lane, sentMarkId, reserveUpTo,
                new InFlight(messageId, value, exclusive, settledFromMs), urgent);
    }

    /** The message whose sent mark this request reads or writes, or null. */
    public String markId() {
        return sentMarkId != null ? sentMarkId : inFlight == null ? null : inFlight.messageId();
    }

    /** This request, also accepting a slot of the bot's global limit up to {@code horizon} ahead (live only). */
    public BudgetRequest reservingUpTo(Duration horizon) {
        return new BudgetRequest(botId, chatId, lane, sentMarkId, lane == Lane.LIVE ? horizon : Duration.ZERO, inFlight,
                urgent);
    }

    /** This request, from a live lane that goes ahead of routine work (see {@code urgent}); backfill never is. */
    public BudgetRequest asUrgent() {
        return new BudgetRequest(botId, chatId, lane, sentMarkId, reserveUpTo, inFlight, lane == Lane.LIVE);
    }

    /**
     * Telegram convention: group and supergroup ids are negative; channels are addressed as
     * {@code @username} or by a negative id. Such chats get the group limit (Telegram Bot API FAQ: 20
     * messages per minute per group) on top of the per-chat limit.
     */
    public boolean isGroup() {
        return isGroup(chatId);
    }

    /** See {@link #isGroup()}. */
    public static boolean isGroup(String chatId) {
        return ChatIds.isGroupOrChannel(chatId);
    }
}
