package dev.sluice.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Starts a throw-away PostgreSQL server for tests from the installed binaries ({@code initdb} and
 * {@code postgres}; Debian package {@code postgresql}): {@code initdb} into a temp dir (trust auth, user
 * {@code sluice}, no fsync), then {@code postgres} on a free 127.0.0.1 port with no Unix socket outside the
 * data dir. The server is a child process stopped by its own PID ({@link PostgresInstance#stop()}).
 *
 * <p>PostgreSQL refuses to run as root: when this JVM runs as root, initdb and postgres run as the
 * unprivileged user {@code postgres} (created by the Debian package) through {@code setpriv}, which
 * execs in place so the child's PID is the server's PID; the temp dir is handed to that user.
 *
 * <p>Binaries are looked up on the {@code PATH}, then in {@code /usr/lib/postgresql/<major>/bin} (Debian
 * does not put them on the PATH), highest major first. Tests call {@link #unavailableReason()} and skip
 * with that reason when it is present.
 */
public final class PostgresLauncher {
    /** The unprivileged account the server runs as when this JVM is root. */
    public static final String SERVICE_USER = "postgres";
    private static final Path DEBIAN_ROOT = Path.of("/usr/lib/postgresql");

    private PostgresLauncher() {
    }

    /** The directory holding both {@code initdb} and {@code postgres}, if any. */
    public static Optional<Path> binDir() {
        if (HostBinaries.hidden("postgres") || HostBinaries.hidden("initdb")) {
            return Optional.empty();
        }
        Optional<Path> onPath = RedisLauncher.findOnPath("initdb").map(p -> p.toAbsolutePath().getParent())
                .filter(d -> Files.isExecutable(d.resolve("postgres")));
        if (onPath.isPresent()) {
            return onPath;
        }
        if (!Files.isDirectory(DEBIAN_ROOT)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(DEBIAN_ROOT)) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("postgres")))
                    .max(Comparator.comparingInt(PostgresLauncher::major));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static int major(Path bin) {
        try {
            return Integer.parseInt(bin.getParent().getFileName().toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Whether this JVM runs as root (uid 0), so the server must run as {@link #SERVICE_USER}. */
    static boolean runningAsRoot() {
        try {
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            return uid instanceof Integer i && i == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "root".equals(System.getProperty("user.name"));
        }
    }

    /**
     * Why a server cannot be started here, or empty if it can: binaries missing, or root without
     * {@code setpriv} or without the {@code postgres} user.
     */
    public static Optional<String> unavailableReason() {
        if (binDir().isEmpty()) {
            String where = HostBinaries.hidden("postgres") || HostBinaries.hidden("initdb")
                    ? " (hidden by " + HostBinaries.HIDE_ENV + ")" : " on the PATH or in " + DEBIAN_ROOT + "/*/bin";
            return Optional.of("PostgreSQL binaries (initdb, postgres) not found" + where
                    + "; install the Debian package 'postgresql'");
        }
        if (runningAsRoot()) {
            if (RedisLauncher.findOnPath("setpriv").isEmpty()) {
                return Optional.of("running as root and 'setpriv' (util-linux) is missing: PostgreSQL refuses to run as root");
            }
            if (uidOf(SERVICE_USER).isEmpty()) {
                return Optional.of("running as root and there is no '" + SERVICE_USER + "' user to run PostgreSQL as");
            }
        }
        return Optional.empty();
    }

    static Optional<String> uidOf(String user) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":");
                if (f.length > 3 && f[0].equals(user)) {
                    return Optional.of(f[2] + ":" + f[3]);
                }
            }
        } catch (IOException e) {
            // no passwd file: treat as absent
        }
        return Optional.empty();
    }

    /**
     * initdb + postgres on a free port; waits until it accepts TCP connections.
     *
     * @throws IllegalStateException if PostgreSQL cannot be started (see {@link #unavailableReason()})
     */
    public static PostgresInstance start() {
        Optional<String> reason = unavailableReason();
        if (reason.isPresent()) {
            throw new IllegalStateException(reason.get());
        }
        return PostgresInstance.start(binDir().orElseThrow(), runningAsRoot() ? List.of(
                RedisLauncher.findOnPath("setpriv").orElseThrow().toString(),
                "--reuid=" + SERVICE_USER, "--regid=" + SERVICE_USER, "--init-groups") : List.of(),
                runningAsRoot() ? uidOf(SERVICE_USER).orElseThrow() : null);
    }
}
