package dev.sluice.app.dev;

import dev.sluice.app.demo.EmbeddedStack;
import dev.sluice.app.tools.ToolException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A {@code sluice dev --data-dir} held by one process: an exclusive lock ({@link FileChannel#tryLock()}) on
 * {@value #LOCK_FILE} in the dir, held until the JVM ends (the OS releases it on any exit, {@code kill -9} included), with
 * the holder's PID written in the file so a second start can name it. Two brokers on one KRaft log corrupt it, so a
 * second {@code sluice dev} on a dir in use refuses before it touches anything there.
 *
 * <p>Once the lock is taken the previous owner of the dir is surely dead; {@link #stopLeftoverRedis()} then stops a
 * redis-server it left running (its PID from {@link EmbeddedStack#REDIS_PID_FILE}), by PID, after checking that the
 * process is that redis-server. Used by the command's thread only.
 */
final class DevDataDir {
    static final String LOCK_FILE = "sluice-dev.lock";
    private static final Duration TERM_GRACE = Duration.ofSeconds(10);
    private static final Duration KILL_GRACE = Duration.ofSeconds(5);

    private final Path dir;
    /** Held (never closed) for the life of the JVM: closing the channel would release the lock. */
    @SuppressWarnings("unused")
    private final FileLock lock;

    private DevDataDir(Path dir, FileLock lock) {
        this.dir = dir;
        this.lock = lock;
    }

    /**
     * Takes the dir's lock or refuses.
     *
     * @throws ToolException naming the dir and the PID holding it (when the lock file names one) if another process
     *     holds the lock; the dir is left as it was
     */
    static DevDataDir lock(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve(LOCK_FILE);
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null; // this JVM holds it already (tests that run the command twice in one JVM)
        }
        if (lock == null) {
            channel.close();
            String holder = holderPid(file).map(pid -> " by pid " + pid).orElse("");
            throw new ToolException("--data-dir " + dir + " is in use" + holder
                    + " (another sluice dev); stop it or give another --data-dir");
        }
        channel.truncate(0);
        channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
        channel.force(false);
        return new DevDataDir(dir, lock);
    }

    private static Optional<Long> holderPid(Path file) {
        try {
            String text = Files.readString(file, StandardCharsets.US_ASCII).trim();
            return text.matches("\\d{1,10}") ? Optional.of(Long.parseLong(text)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * Stops a redis-server that an earlier (killed) {@code sluice dev} of this dir left running: the process named in
     * {@link EmbeddedStack#REDIS_PID_FILE}, if it is alive and is a redis-server serving this dir (its command line
     * names redis-server and its working dir is the dir's {@code redis/}, or it names the port). SIGTERM (Redis
     * flushes its append-only file), then SIGKILL after {@link #TERM_GRACE}. A process that is not that redis-server is
     * left alone.
     *
     * @return the line to tell the user, if one was stopped or could not be
     */
    Optional<String> stopLeftoverRedis() throws IOException, InterruptedException {
        Path pidFile = dir.resolve(EmbeddedStack.REDIS_PID_FILE);
        if (!Files.exists(pidFile)) {
            return Optional.empty();
        }
        String[] parts = Files.readString(pidFile, StandardCharsets.US_ASCII).trim().split("\\s+");
        Files.delete(pidFile);
        if (parts.length != 2 || !parts[0].matches("\\d{1,10}") || !parts[1].matches("\\d{1,5}")) {
            return Optional.empty();
        }
        long pid = Long.parseLong(parts[0]);
        String port = parts[1];
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !handle.get().isAlive() || !isOurRedis(pid, port)) {
            return Optional.empty();
        }
        ProcessHandle p = handle.get();
        p.destroy();
        try {
            p.onExit().get(TERM_GRACE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            p.destroyForcibly();
            try {
                p.onExit().get(KILL_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e2) {
                return Optional.of("redis-server pid " + pid + " (port " + port + ") left running by an earlier sluice dev of this dir"
                        + " did not exit after SIGKILL; stop it by hand");
            }
        } catch (java.util.concurrent.ExecutionException e) {
            // onExit does not fail; treat as exited
        }
        return Optional.of("stopped redis-server pid " + pid + " (port " + port + ") left running by an earlier sluice dev of this dir");
    }

    /** /proc/PID/cmdline names redis-server, and /proc/PID/cwd is this dir's redis/ or the command line names the port. */
    private boolean isOurRedis(long pid, String port) {
        Path proc = Path.of("/proc", Long.toString(pid));
        try {
            String cmdline = new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8).replace('\0', ' ');
            if (!cmdline.contains("redis-server")) {
                return false;
            }
            boolean namesPort = cmdline.matches(".*[: ]" + port + "\\b.*");
            boolean inDir;
            try {
                inDir = Files.readSymbolicLink(proc.resolve("cwd")).equals(dir.resolve("redis").toRealPath());
            } catch (IOException e) {
                inDir = false;
            }
            return inDir || namesPort;
        } catch (IOException e) {
            return false; // gone meanwhile, or no /proc (not Linux): leave it
        }
    }
}
