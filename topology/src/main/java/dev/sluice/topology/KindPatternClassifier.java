package dev.sluice.topology;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.Settings;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Classification (DESIGN.md, Event classes; issue 5 item 1): the event's own {@code event_class}, else the
 * class of the first configured {@code kind} pattern that matches, else {@link NotificationClass#ROUTINE}.
 *
 * <p>Spec (config {@code classify.kind.patterns}): comma-separated {@code <glob>=<CLASS>} pairs, e.g.
 * {@code meeting.*=CRITICAL,board.*=COLLAPSIBLE,quake.m7=CRITICAL}. In a glob {@code *} matches any run of
 * characters (also dots), every other character is literal; the whole kind must match. Order matters:
 * the first match wins.
 */
public final class KindPatternClassifier implements Classifier {
    /** One {@code <glob>=<CLASS>} pair. */
    public record Rule(String glob, NotificationClass eventClass, Pattern regex) {
        boolean matches(String kind) {
            return regex.matcher(kind).matches();
        }
    }

    private final List<Rule> rules;

    private KindPatternClassifier(List<Rule> rules) {
        this.rules = List.copyOf(rules);
    }

    /** No patterns: the event's own class, else ROUTINE. */
    public static KindPatternClassifier none() {
        return new KindPatternClassifier(List.of());
    }

    /**
     * Parses a spec like {@code meeting.*=CRITICAL,board.*=COLLAPSIBLE}; blank means no patterns.
     *
     * @param key the config key, named in errors
     * @throws dev.sluice.config.ConfigException naming the key, the value and the bad pair
     */
    public static KindPatternClassifier parse(String key, String spec) {
        if (spec == null || spec.isBlank()) {
            return none();
        }
        List<Rule> rules = new ArrayList<>();
        for (String pair : spec.split(",")) {
            String p = pair.trim();
            int eq = p.lastIndexOf('=');
            if (eq <= 0 || eq == p.length() - 1) {
                throw Settings.invalid(key, spec, "comma-separated <kind glob>=<CRITICAL|ROUTINE|COLLAPSIBLE> pairs, e.g. "
                        + "meeting.*=CRITICAL,board.*=COLLAPSIBLE (bad pair '" + p + "')");
            }
            String glob = p.substring(0, eq).trim();
            String cls = p.substring(eq + 1).trim().toUpperCase();
            NotificationClass eventClass;
            try {
                eventClass = NotificationClass.valueOf(cls);
            } catch (IllegalArgumentException e) {
                throw Settings.invalid(key, spec, "a class CRITICAL, ROUTINE or COLLAPSIBLE after '=' (bad pair '" + p + "')");
            }
            rules.add(new Rule(glob, eventClass, globToRegex(glob)));
        }
        return new KindPatternClassifier(rules);
    }

    static Pattern globToRegex(String glob) {
        StringBuilder re = new StringBuilder();
        for (String part : glob.split("\\*", -1)) {
            re.append(Pattern.quote(part)).append(".*");
        }
        // split(-1) yields one more part than there are '*': drop the trailing ".*" added after the last part
        re.setLength(re.length() - 2);
        return Pattern.compile(re.toString(), Pattern.DOTALL);
    }

    public List<Rule> rules() {
        return rules;
    }

    @Override
    public NotificationClass classify(Notification n) {
        if (n.getEventClass() != null) {
            return n.getEventClass();
        }
        String kind = n.getKind() == null ? "" : n.getKind();
        for (Rule r : rules) {
            if (r.matches(kind)) {
                return r.eventClass();
            }
        }
        return NotificationClass.ROUTINE;
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        rules.forEach(r -> s.append(s.length() == 0 ? "" : ",").append(r.glob()).append('=').append(r.eventClass()));
        return s.toString();
    }
}
