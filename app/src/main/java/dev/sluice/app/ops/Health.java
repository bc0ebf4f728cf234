package dev.sluice.app.ops;

import java.util.Map;
import java.util.Objects;

/**
 * The answer of a health check: up or down, with a few details for humans (state names, modes;
 * never secrets).
 *
 * @param up whether the check passes (HTTP 200) or not (HTTP 503)
 * @param details small string values shown in the JSON body
 */
public record Health(boolean up, Map<String, String> details) {
    public Health {
        details = Map.copyOf(Objects.requireNonNull(details, "details"));
    }

    public static Health up(Map<String, String> details) {
        return new Health(true, details);
    }

    public static Health down(Map<String, String> details) {
        return new Health(false, details);
    }
}
