package dev.sluice.sender;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bots whose token the provider rejected (401 Unauthorized: revoked; 404 Not Found: malformed; issue 16, F10).
 * Such an answer is about the bot, not the message: every other message of the bot would get it too. So the
 * bot's lanes are parked instead of ending its backlog FAILED message by message: a lane of a rejected bot waits
 * until the next re-check ({@code sender.token.recheck.ms}, default 60 s), where exactly one lane makes a call
 * (the probe) and the others wait one more period. Any answer other than a rejection clears the bot. Messages
 * wait, or end EXPIRED at their {@code expires_at}; none ends FAILED for the token.
 *
 * <p>Readiness reports a rejected bot ({@link #rejectedBots}), and the gauge {@code sluice_bot_token_rejected{bot}}
 * reads {@link #isRejected}; neither carries the token, and descriptions are the transport's redacted text.
 *
 * <p>Thread-safe: the sending threads call it concurrently; all state is under this object's monitor.
 */
public final class TokenRejections {
    private static final Logger log = LoggerFactory.getLogger(TokenRejections.class);

    private final long recheckMs;
    /** Rejected bot → when the next probe may call (epoch ms). */
    private final Map<String, Long> nextProbeAtMs = new ConcurrentHashMap<>();

    public TokenRejections(Duration recheck) {
        this.recheckMs = Objects.requireNonNull(recheck, "recheck").toMillis();
        if (recheckMs < 1) {
            throw new IllegalArgumentException("recheck must be positive, was " + recheck);
        }
    }

    /**
     * Whether a lane of {@code bot} may go on to its call now: 0 when the bot is not rejected, or when this
     * caller takes the re-check (the next probe then moves one period on, so the others keep waiting); else the
     * epoch ms at which the lane asks again.
     */
    public synchronized long parkedUntil(String bot, long nowMs) {
        Long at = nextProbeAtMs.get(bot);
        if (at == null) {
            return 0;
        }
        if (nowMs >= at) {
            nextProbeAtMs.put(bot, nowMs + recheckMs); // this caller is the probe
            return 0;
        }
        return at;
    }

    /**
     * The provider rejected {@code bot}'s token at {@code nowMs}: park its lanes until the next re-check.
     *
     * @return when the lane that got the rejection asks again (epoch ms)
     */
    public synchronized long reject(String bot, int errorCode, String description, long nowMs) {
        long next = nowMs + recheckMs;
        Long before = nextProbeAtMs.put(bot, next);
        if (before == null) {
            log.warn("the provider rejected the token of bot {} ({} {}): its lanes are parked and the token is "
                    + "re-checked every {} ms; its messages wait (or expire at their deadline)", bot, errorCode,
                    description, recheckMs);
        }
        return next;
    }

    /** An answer other than a rejection: the token works (again). */
    public void accepted(String bot) {
        if (nextProbeAtMs.remove(bot) != null) {
            log.info("the provider accepts the token of bot {} again: its lanes resume", bot);
        }
    }

    public boolean isRejected(String bot) {
        return nextProbeAtMs.containsKey(bot);
    }

    /** The bots whose token is rejected right now, sorted (for readiness). */
    public Set<String> rejectedBots() {
        return new TreeSet<>(nextProbeAtMs.keySet());
    }
}
