package dev.sluice.config;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Decides which config keys hold secrets and removes secrets from text bound for logs, stderr and
 * exceptions, in three ways:
 * <ol>
 *   <li>by key ({@link #isSecretKey}): keys naming a token, password, passphrase, secret, credential,
 *       user info, private key, API key, JAAS config, an Authorization or Cookie header, or ending in {@code .key} (e.g.
 *       {@code kafka.ssl.keystore.key}, the inline PEM private key) are never echoed;</li>
 *   <li>by shape ({@link #redact}): the user info of any {@code scheme://user:pass@host} URL, and
 *       Telegram bot tokens ({@link TokenRedaction});</li>
 *   <li>by value: every value of a secret key that {@link Settings} has held in this process (and the
 *       password of any URL it held) is {@linkplain #remember remembered}, with its percent-encoded,
 *       percent-decoded and JSON-escaped forms, and replaced wherever it appears. This catches secrets of
 *       any shape (a provider API key, a Redis password with a {@code %}) inside a library's exception
 *       text, where the key is no longer known.</li>
 * </ol>
 *
 * <p>Thread-safety: stateless apart from the set of remembered values, a concurrent set that any thread may
 * add to and read; entries are never removed (a process holds a handful of secrets). Values shorter than
 * {@value #MIN_REMEMBERED_LENGTH} characters are not remembered, so short common words never vanish from
 * logs; such secrets are still covered by key and by shape.
 */
public final class SecretRedaction {
    /** What a secret is replaced with. */
    public static final String REDACTED = TokenRedaction.REDACTED;
    /** Remembered values shorter than this are ignored (they would redact ordinary words). */
    public static final int MIN_REMEMBERED_LENGTH = 6;
    /** URL user info without a colon is remembered from this length on (shorter: a user name like "default"). */
    static final int MIN_REMEMBERED_TOKEN_LENGTH = 12;

    private static final Pattern SECRET_KEY = Pattern.compile(
            "token|password|passwd|passphrase|secret|credential|sasl\\.jaas|user\\.info|userinfo|private|api\\.key|apikey"
                    + "|authorization|cookie"
                    + "|(^|\\.)key$|(^|\\.)key\\.");
    /** Keys that match {@link #SECRET_KEY} but name no secret (the budget's key name, a source setting). */
    private static final Pattern NOT_SECRET_KEY = Pattern.compile(
            "(^|\\.)limit\\.key$|credentials\\.source$|credentials\\.client\\.id$|\\.key\\.(de)?serializer$|^key\\.(de)?serializer$|token\\.endpoint\\.url$");
    /** {@code scheme://userinfo@}: the user info ends at the last '@' before the host's '/', whitespace or quote. */
    private static final Pattern URL_USER_INFO = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://)[^/\\s\"'<>@]*(?:@[^/\\s\"'<>@]*)*@");

    /** {@code password=...} in a URL's query or a JDBC URL's properties ({@code jdbc:postgresql://h/db?password=x}). */
    private static final Pattern URL_PASSWORD_PARAM = Pattern.compile("(?i)([?&;](?:password|passwd|pwd)=)[^&;\\s\"']*");

    private static final Set<String> REMEMBERED = ConcurrentHashMap.newKeySet();
    /** {@link #REMEMBERED}, longest first (so a secret is not half-replaced by one it contains); rebuilt on change. */
    private static volatile List<String> longestFirst = List.of();

    private SecretRedaction() {
    }

    /** Whether {@code key} (any case, with or without a {@code kafka.} prefix) holds a secret. */
    public static boolean isSecretKey(String key) {
        if (key == null) {
            return false;
        }
        String k = key.toLowerCase(Locale.ROOT).replace('_', '.').replace('-', '.');
        return SECRET_KEY.matcher(k).find() && !NOT_SECRET_KEY.matcher(k).find();
    }

    /**
     * {@code value} as it may be shown for {@code key}: {@link #REDACTED} for a secret key, else the value
     * with any URL user info removed.
     */
    public static String redactValue(String key, String value) {
        if (value == null) {
            return null;
        }
        return isSecretKey(key) ? REDACTED : withoutUserInfo(value);
    }

    /**
     * {@code redis://user:pw@host} → {@code redis://[redacted]@host} and {@code ?password=pw} →
     * {@code ?password=[redacted]}, for every URL in {@code text}.
     */
    public static String withoutUserInfo(String text) {
        if (text == null || !text.contains("://")) {
            return text;
        }
        String out = text;
        if (out.indexOf('@') >= 0) {
            out = URL_USER_INFO.matcher(out).replaceAll("$1" + Matcher.quoteReplacement(REDACTED) + "@");
        }
        if (out.indexOf('=') >= 0) {
            out = URL_PASSWORD_PARAM.matcher(out).replaceAll("$1" + Matcher.quoteReplacement(REDACTED));
        }
        return out;
    }

    /**
     * Remembers the secrets in a config entry: its value when the key is secret, and the user info (and
     * password) of a URL in any value.
     */
    public static void rememberEntry(String key, String value) {
        if (value == null || value.isBlank()) {
            return;
        }
        if (isSecretKey(key)) {
            remember(value);
        }
        Matcher param = URL_PASSWORD_PARAM.matcher(value);
        while (value.contains("://") && param.find()) {
            remember(value.substring(param.end(1), param.end()));
        }
        if (value.contains("://") && value.indexOf('@') >= 0) {
            Matcher m = URL_USER_INFO.matcher(value);
            while (m.find()) {
                String userInfo = value.substring(m.end(1), m.end() - 1);
                int colon = userInfo.indexOf(':');
                if (colon >= 0) {
                    remember(userInfo.substring(colon + 1));
                    remember(userInfo);
                } else if (userInfo.length() >= MIN_REMEMBERED_TOKEN_LENGTH) {
                    remember(userInfo); // a token or a Redis password alone; a short one is a user name
                }
            }
        }
    }

    /** Remembers {@code secret} (and its encoded forms) so that {@link #redact} removes it from any text. */
    public static void remember(String secret) {
        if (secret == null) {
            return;
        }
        String s = secret.trim();
        if (s.length() < MIN_REMEMBERED_LENGTH) {
            return;
        }
        int before = REMEMBERED.size();
        REMEMBERED.add(s);
        REMEMBERED.add(URLEncoder.encode(s, StandardCharsets.UTF_8));
        REMEMBERED.add(URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20"));
        REMEMBERED.add(TokenRedaction.jsonEscaped(s));
        try {
            String decoded = URLDecoder.decode(s, StandardCharsets.UTF_8);
            if (decoded.length() >= MIN_REMEMBERED_LENGTH) {
                REMEMBERED.add(decoded);
            }
        } catch (IllegalArgumentException e) {
            // not valid percent-encoding (e.g. "pa%zz"): the raw form is remembered already
        }
        // A multi-line secret (a PEM key) may be printed one line at a time.
        for (String line : s.split("\\R")) {
            String l = line.trim();
            if (l.length() >= 16 && !l.startsWith("-----")) {
                REMEMBERED.add(l);
            }
        }
        if (REMEMBERED.size() != before) {
            synchronized (REMEMBERED) {
                longestFirst = REMEMBERED.stream().sorted(Comparator.comparingInt(String::length).reversed()).toList();
            }
        }
    }

    /**
     * {@code text} with every remembered secret, every URL user info and every bot token replaced by
     * {@link #REDACTED}; null stays null.
     */
    public static String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = text;
        for (String secret : longestFirst) {
            if (out.contains(secret)) {
                out = out.replace(secret, REDACTED);
            }
        }
        out = withoutUserInfo(out);
        return TokenRedaction.redact(out);
    }
}
