package dev.sluice.testkit;

/**
 * Bot tokens for tests: the shape Telegram issues ({@code <bot number>:<35 characters>}, what Sluice's redaction
 * looks for), built at run time so that no token-shaped string is committed to the repository (secret scanners
 * would rightly flag one). The same arguments give the same token. Stateless.
 */
public final class FakeTokens {
    private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    private FakeTokens() {
    }

    /** A token of bot {@code botNumber}, e.g. {@code of("123456789")}. */
    public static String of(String botNumber) {
        return of(botNumber, "fake");
    }

    /** A token of bot {@code botNumber} whose secret part starts with {@code marker} (letters and digits). */
    public static String of(String botNumber, String marker) {
        StringBuilder tail = new StringBuilder("AA").append(marker);
        int i = Math.floorMod(botNumber.hashCode(), ALPHABET.length());
        while (tail.length() < 35) {
            tail.append(ALPHABET.charAt(i));
            i = (i * 7 + 3) % ALPHABET.length();
        }
        return botNumber + ":" + tail.substring(0, 35);
    }
}
