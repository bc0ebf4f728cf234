package dev.sluice.sender.budget;

import dev.sluice.sender.redis.RedisEndpoint;
import dev.sluice.sender.redis.RedisSession;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Reads a budget key's state from Redis without changing it (TIME, GET, PTTL, SCAN only; TIME by a script that reads no key, so it runs on the node that owns the key): the packed keys of
 * {@link BudgetKeys} ({@code sluice:{key}:bot}, {@code :chat:<id>}, {@code :group:<id>}) interpreted with the
 * same rules as {@code budget.lua} (GCRA, AIMD climb, gates), on Redis server time. For {@code sluice budget status} and for operators; never used for decisions.
 *
 * <p>The script takes the limits as arguments and Redis stores only TATs, so the burst left and the
 * effective rate are computed with the {@link BudgetConfig} given here; pass the senders' settings.
 */
public final class BudgetInspector implements AutoCloseable {
    /** At most this many gate keys are listed (SCAN stops there). */
    public static final int MAX_GATES = 1000;
    /** Reads nothing and writes nothing: TIME on the node that owns KEYS[1]. */
    private static final String NODE_TIME = "return redis.call('TIME')";

    private final BudgetConfig config;
    private final ClientResources resources;
    private final RedisSession<String, String> session;
    private final RedisClusterCommands<String, String> redis;

    /**
     * @throws BudgetUnavailableException if Redis cannot be reached
     */
    public BudgetInspector(String redisUrl, BudgetConfig config, Duration timeout) {
        this.config = Objects.requireNonNull(config, "config");
        RedisEndpoint endpoint = RedisEndpoint.parse(redisUrl);
        this.resources = DefaultClientResources.create();
        try {
            this.session = RedisSession.connect(endpoint, StringCodec.UTF8, timeout, resources);
        } catch (RedisException e) {
            resources.shutdown(0, 1, TimeUnit.SECONDS);
            throw new BudgetUnavailableException(e.getMessage(), e);
        }
        this.redis = session.sync();
    }

    /** A GCRA's state at Redis time. TAT null = key absent (a full bucket). */
    public record Gcra(Long tatEpochMicros, long intervalMicros, int burst, long remainingBurst, long nextFreeInMs) {
    }

    /**
     * An active penalty gate: scope {@code bot}, {@code bot-probe} (the bot's gate closed behind a penalty probe, waiting
     * for its answer: {@code budget.penalty.probe.window.ms}), {@code chat} or {@code group}; id is the chat id (null for
     * the bot's).
     */
    public record Gate(String scope, String id, long remainingMs) {
    }

    /**
     * A live sender's published limits of the key ({@code sluice:{<bot>}:limits}, {@code budget.limits.check}).
     *
     * @param instance    the sender's {@code sender.instance.id}
     * @param expiresInMs how long its field lives unless it publishes again (every 30 s by default)
     * @param differences each key whose value differs from the limits this reading was interpreted with, as
     *                    {@code key=<here> here, <theirs> at sender <instance>}; empty when they agree
     */
    public record Publisher(String instance, long expiresInMs, List<String> differences) {
    }

    /**
     * A key's state.
     *
     * @param key                  the budget key (bot id)
     * @param redisTimeEpochMicros Redis server time of the reading
     * @param configuredRatePerS   the global rate of the key's config, as configured (before the arrival margin)
     * @param aimdMultiplier       1.0 = full rate; lowered after bot-wide 429s, climbing back
     * @param aimdClimbsFromEpochMicros the instant the multiplier climbs from (null = full rate)
     * @param effectiveRatePerS    the global rate the script applies now: less the arrival margin, times the AIMD multiplier
     * @param global               the key's global GCRA at the effective rate
     * @param backfillTatEpochMicros the backfill lane's TAT (null = absent)
     * @param gates                active penalty gates, longest first (bounded by {@link #MAX_GATES})
     * @param chat                 the chat's GCRA when a chat was asked for, else null
     * @param group                the group's GCRA when the chat is a group, else null
     * @param criticalMarkMs       how long the key's critical mark lives on (a recent CRITICAL grant: routine lanes hold
     *                             to {@code budget.reservation.routine.max.ms}); null when there is none
     * @param senders              the live senders that published their limits of the key, by instance id: whether the
     *                             settings this reading was interpreted with are theirs
     */
    public record Status(String key, long redisTimeEpochMicros, double configuredRatePerS, double aimdMultiplier,
                         Long aimdClimbsFromEpochMicros, double effectiveRatePerS, Gcra global,
                         Long backfillTatEpochMicros, List<Gate> gates, String chatId, Gcra chat, Gcra group,
                         Long criticalMarkMs, List<Publisher> senders) {
    }

    /**
     * Reads the key (and one chat of it, if {@code chatId} is not null).
     *
     * @throws IllegalArgumentException   if the key is not a valid budget key
     * @throws BudgetUnavailableException if Redis fails
     */
    public Status status(String key, String chatId) {
        String tag = BudgetKeys.tag(key);
        try {
            // Redis TIME of the node that holds the key (on a cluster, the primary of the bot's slot), as the script reads it
            List<Object> time = redis.eval(NODE_TIME, ScriptOutputType.MULTI, BudgetKeys.botState(key));
            long now = Long.parseLong(String.valueOf(time.get(0))) * 1_000_000L + Long.parseLong(String.valueOf(time.get(1)));
            BudgetLimits limits = config.limitsFor(key);
            // "<global TAT>|<bot gate>|<AIMD m ppm>|<AIMD climb start>|<backfill TAT>", empty fields absent
            Long[] bot = fields(redis.get(BudgetKeys.botState(key)), 5);
            long m = 1_000_000L;
            Long climbsFrom = null;
            if (bot[2] != null && bot[3] != null) {
                m = bot[2];
                climbsFrom = bot[3];
                long inc = Math.max(1, Math.round(config.aimdIncreasePerS() * 1e6));
                if (now > climbsFrom) {
                    m += (long) Math.floor(inc * (double) (now - climbsFrom) / 1_000_000d);
                }
                m = Math.min(m, 1_000_000L);
            }
            long interval = ceilDiv(limits.globalIntervalMicros() * 1_000_000L, m);
            Gcra global = gcra(bot[0], interval, limits.globalBurst(), now);
            List<Gate> gates = new ArrayList<>();
            Long botGate = bot[1];
            if (botGate != null && botGate > now) {
                boolean probe = botGate.toString().equals(redis.get(tag + BudgetKeys.PROBE));
                gates.add(new Gate(probe ? "bot-probe" : "bot", null, ceilMs(botGate - now)));
            }
            scanGates(tag + BudgetKeys.CHAT, "chat", now, gates);
            scanGates(tag + BudgetKeys.GROUP, "group", now, gates);
            gates.sort((a, b) -> Long.compare(b.remainingMs(), a.remainingMs()));
            Gcra chat = null;
            Gcra group = null;
            if (chatId != null) {
                chat = gcra(fields(redis.get(BudgetKeys.chat(key, chatId)), 2)[0], limits.chatIntervalMicros(),
                        limits.chatBurst(), now);
                if (BudgetRequest.isGroup(chatId)) {
                    group = gcra(fields(redis.get(BudgetKeys.group(key, chatId)), 2)[0], limits.groupIntervalMicros(config.groupArrivalMargin().toMillis()),
                            limits.groupBurst(), now);
                }
            }
            Long critical = redis.pttl(tag + BudgetKeys.CRITICAL);
            return new Status(key, now, config.configuredLimitsFor(key).globalRatePerS(), m / 1e6, climbsFrom, 1e6 / interval, global,
                    bot[4], List.copyOf(gates), chatId, chat, group, critical == null || critical < 0 ? null : critical,
                    publishers(key, now / 1000));
        } catch (RedisException e) {
            throw new BudgetUnavailableException("reading budget key '" + key + "' failed: " + e.getMessage(), e);
        }
    }

    /** The live fields of the key's published limits ("expiry ms|limits text[|nonce]"), by instance id. */
    private List<Publisher> publishers(String key, long nowMs) {
        SharedLimits here = SharedLimits.of(config, key);
        List<Publisher> out = new ArrayList<>();
        new java.util.TreeMap<>(redis.hgetall(BudgetKeys.limits(key))).forEach((instance, value) -> {
            String[] parts = value.split("\\|", -1);
            long expiresAt;
            try {
                expiresAt = Long.parseLong(parts[0]);
            } catch (NumberFormatException e) {
                return; // not a field this version can read
            }
            if (expiresAt > nowMs && parts.length > 1) {
                out.add(new Publisher(instance, expiresAt - nowMs,
                        here.differences(SharedLimits.parse(parts[1]), "sender " + instance)));
            }
        });
        return List.copyOf(out);
    }

    private void scanGates(String prefix, String scope, long now, List<Gate> out) {
        ScanCursor cursor = ScanCursor.INITIAL;
        ScanArgs args = ScanArgs.Builder.matches(escapeGlob(prefix) + "*").limit(200);
        int seen = 0;
        do {
            KeyScanCursor<String> page = redis.scan(cursor, args);
            for (String gateKey : page.getKeys()) {
                Long until = fields(redis.get(gateKey), 2)[1]; // "<TAT>|<gate>"
                if (until != null && until > now && seen++ < MAX_GATES) {
                    out.add(new Gate(scope, gateKey.substring(prefix.length()), ceilMs(until - now)));
                }
            }
            cursor = page;
        } while (!cursor.isFinished() && seen < MAX_GATES);
    }

    /** The key tag holds braces and bot ids may hold none of * ? [ ] \, but escape anyway: glob metacharacters. */
    private static String escapeGlob(String s) {
        return s.replaceAll("([*?\\[\\]\\\\])", "\\\\$1");
    }

    /** A packed value split on '|' into {@code n} numbers; null where empty or when the key is absent. */
    static Long[] fields(String packed, int n) {
        Long[] out = new Long[n];
        if (packed == null) {
            return out;
        }
        String[] parts = packed.split("\\|", -1);
        for (int i = 0; i < n && i < parts.length; i++) {
            out[i] = parts[i].isEmpty() ? null : Long.parseLong(parts[i]);
        }
        return out;
    }

    /** Burst left and next free instant, by the script's rule: pass if now ≥ TAT − (b − 1)·I. */
    static Gcra gcra(Long tat, long interval, int burst, long now) {
        long tolerance = (burst - 1L) * interval;
        long effective = tat == null ? now : Math.max(tat, now);
        long remaining = Math.max(0, Math.min(burst, Math.floorDiv(now - effective + tolerance + interval, interval)));
        long allowAt = effective - tolerance;
        return new Gcra(tat, interval, burst, remaining, allowAt > now ? ceilMs(allowAt - now) : 0);
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    private static long ceilMs(long micros) {
        return ceilDiv(micros, 1000);
    }

    @Override
    public void close() {
        try {
            session.close();
        } finally {
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
