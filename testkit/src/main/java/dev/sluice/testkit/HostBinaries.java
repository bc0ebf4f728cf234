package dev.sluice.testkit;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Finds the host programs that tests and the embedded demo use ({@code redis-server}, {@code initdb},
 * {@code postgres}, {@code chromium}, {@code openssl}, ...) in one way, so a test that cannot run says
 * why in one way too.
 *
 * <p>A program is looked up on the {@code PATH}, then at the fixed paths the caller names (Debian puts
 * PostgreSQL's binaries outside the PATH). The environment variable {@value #HIDE_ENV} (a comma-separated
 * list of program names, e.g. {@code postgres,chromium}) makes this class answer "not found" for those
 * names wherever they are installed: it is how {@code scripts/fresh-machine-check.sh} plays a machine that
 * has only Java and Maven on one that has more. Stateless and thread-safe.
 */
public final class HostBinaries {
    /** Environment variable listing program names to treat as not installed. */
    public static final String HIDE_ENV = "SLUICE_TESTKIT_HIDE";

    private HostBinaries() {
    }

    /**
     * The first executable regular file called {@code name} on the {@code PATH}, else the first of
     * {@code fallbacks} that is one; empty if none is, or if {@code name} is hidden by {@value #HIDE_ENV}.
     */
    public static Optional<Path> find(String name, Path... fallbacks) {
        if (hidden(name)) {
            return Optional.empty();
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                if (!dir.isEmpty() && executable(Path.of(dir, name))) {
                    return Optional.of(Path.of(dir, name));
                }
            }
        }
        return Arrays.stream(fallbacks).filter(HostBinaries::executable).findFirst();
    }

    /**
     * Why a test that needs {@code name} cannot run, for a JUnit assumption: names the program, where it
     * was looked for and how to get it ({@code howToGet}, e.g. "install the Debian package 'chromium'").
     */
    public static String missing(String name, String howToGet) {
        String why = hidden(name) ? " (hidden by " + HIDE_ENV + ")" : " on the PATH";
        return "'" + name + "' not found" + why + "; " + howToGet;
    }

    /** Whether {@value #HIDE_ENV} lists {@code name}. */
    public static boolean hidden(String name) {
        String hide = System.getenv(HIDE_ENV);
        if (hide == null || hide.isBlank()) {
            return false;
        }
        Set<String> names = Arrays.stream(hide.split(",")).map(String::trim).collect(Collectors.toSet());
        return names.contains(name);
    }

    private static boolean executable(Path candidate) {
        return Files.isRegularFile(candidate) && Files.isExecutable(candidate);
    }
}
