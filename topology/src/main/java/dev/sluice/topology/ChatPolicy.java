package dev.sluice.topology;

import dev.sluice.config.Settings;
import dev.sluice.limits.GcraPolicy;
import dev.sluice.limits.Rate;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The per-chat policy limit of the topology (DESIGN.md, Topology step 5b): at most {@code rate} individual
 * ROUTINE messages per chat with a burst, decided by a GCRA whose TAT lives in the store
 * {@code chat-policy-store}. Over the limit a ROUTINE notification is folded into a digest instead of sent
 * on. A token bucket with burst b and rate r admits at most b + r·T in any interval of length T, so a
 * user gets at most that many individual messages; the rest arrive in digests.
 *
 * <p>Config: {@code policy.chat.rate} (e.g. {@code 5/h}; blank or {@code none}: no limit, the default),
 * {@code policy.chat.burst} (default: the rate's count), {@code policy.chat.overrides}: comma-separated
 * {@code <chat id>=<rate>:<burst>} or {@code <chat id>=none}, e.g. {@code 42=20/h:10,-1001234=none}.
 */
public final class ChatPolicy {
    public static final String RATE = "policy.chat.rate";
    public static final String BURST = "policy.chat.burst";
    public static final String OVERRIDES = "policy.chat.overrides";

    private final Optional<GcraPolicy> defaultPolicy;
    private final Map<String, Optional<GcraPolicy>> overrides;

    private ChatPolicy(Optional<GcraPolicy> defaultPolicy, Map<String, Optional<GcraPolicy>> overrides) {
        this.defaultPolicy = defaultPolicy;
        this.overrides = Map.copyOf(overrides);
    }

    /** No limit for any chat. */
    public static ChatPolicy none() {
        return new ChatPolicy(Optional.empty(), Map.of());
    }

    /** One policy for every chat. */
    public static ChatPolicy of(Rate rate, long burst) {
        return new ChatPolicy(Optional.of(new GcraPolicy(rate, burst)), Map.of());
    }

    public static ChatPolicy from(Settings s) {
        String rateText = s.string(RATE, "none").trim();
        Optional<GcraPolicy> def = Optional.empty();
        if (!rateText.equalsIgnoreCase("none")) {
            Rate rate = parseRate(RATE, rateText, rateText);
            long burst = s.longValue(BURST, rate.count(), v -> v >= 1 && v <= 1_000_000, "a burst 1..1000000");
            def = Optional.of(new GcraPolicy(rate, burst));
        } else if (s.has(BURST)) {
            throw Settings.invalid(BURST, s.string(BURST, ""), "no burst without " + RATE);
        }
        Map<String, Optional<GcraPolicy>> overrides = new LinkedHashMap<>();
        String spec = s.string(OVERRIDES, "");
        if (!spec.isBlank()) {
            for (String pair : spec.split(",")) {
                String p = pair.trim();
                int eq = p.indexOf('=');
                if (eq <= 0 || eq == p.length() - 1) {
                    throw Settings.invalid(OVERRIDES, spec, "comma-separated <chat id>=<rate>:<burst> or <chat id>=none, e.g. "
                            + "42=20/h:10,-1001234=none (bad pair '" + p + "')");
                }
                String chat = p.substring(0, eq).trim();
                String value = p.substring(eq + 1).trim();
                if (value.equalsIgnoreCase("none")) {
                    overrides.put(chat, Optional.empty());
                    continue;
                }
                int colon = value.lastIndexOf(':');
                Rate rate = parseRate(OVERRIDES, spec, colon < 0 ? value : value.substring(0, colon));
                long burst;
                try {
                    burst = colon < 0 ? rate.count() : Long.parseLong(value.substring(colon + 1).trim());
                } catch (NumberFormatException e) {
                    throw Settings.invalid(OVERRIDES, spec, "a whole burst after ':' (bad pair '" + p + "')");
                }
                try {
                    overrides.put(chat, Optional.of(new GcraPolicy(rate, burst)));
                } catch (IllegalArgumentException e) {
                    throw Settings.invalid(OVERRIDES, spec, e.getMessage() + " (bad pair '" + p + "')");
                }
            }
        }
        return new ChatPolicy(def, overrides);
    }

    private static Rate parseRate(String key, String value, String rateText) {
        try {
            return Rate.parse(rateText);
        } catch (IllegalArgumentException e) {
            throw Settings.invalid(key, value, "a rate <count>/<period> such as 5/h or none (" + e.getMessage() + ")");
        }
    }

    /** The policy of a chat (its override, else the default); empty: no limit. */
    public Optional<GcraPolicy> forChat(String chatId) {
        Optional<GcraPolicy> o = overrides.get(chatId);
        return o != null ? o : defaultPolicy;
    }

    public Optional<GcraPolicy> defaultPolicy() {
        return defaultPolicy;
    }

    public Map<String, Optional<GcraPolicy>> overrides() {
        return overrides;
    }

    @Override
    public String toString() {
        return "ChatPolicy{default=" + defaultPolicy.map(Object::toString).orElse("none") + ", overrides=" + overrides.size() + "}";
    }
}
