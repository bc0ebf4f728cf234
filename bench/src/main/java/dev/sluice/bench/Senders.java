package dev.sluice.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A group of sender child processes started together and stopped together (by PID). */
public final class Senders implements AutoCloseable {
    private final List<SenderProcess> processes = new ArrayList<>();
    private final Map<String, String> settings;
    private final Map<String, String> tokens;
    private final Path workDir;
    private final String heap;
    private final SenderProcess.Kind kind;
    private Duration cpuOfStopped = Duration.ZERO;

    private Senders(SenderProcess.Kind kind, Map<String, String> settings, Map<String, String> tokens, Path workDir,
                    String heap) {
        this.kind = kind;
        this.settings = settings;
        this.tokens = tokens;
        this.workDir = workDir;
        this.heap = heap;
    }

    /** Starts {@code count} senders named {@code <prefix>-1..count} at once and waits until all run. */
    public static Senders start(String prefix, int count, Map<String, String> settings, Map<String, String> tokens,
                                Path workDir, String heap) throws Exception {
        return start(SenderProcess.Kind.SLUICE, prefix, count, settings, tokens, workDir, heap);
    }

    /** As {@link #start(String, int, Map, Map, Path, String)}, each child running {@code kind}. */
    public static Senders start(SenderProcess.Kind kind, String prefix, int count, Map<String, String> settings,
                                Map<String, String> tokens, Path workDir, String heap) throws Exception {
        Senders s = new Senders(kind, settings, tokens, workDir, heap);
        try {
            for (int i = 1; i <= count; i++) {
                s.processes.add(SenderProcess.start(s.kind, prefix + "-" + i, settings, tokens, workDir, heap));
            }
            for (int i = 0; i < s.processes.size(); i++) {
                s.processes.set(i, s.ready(s.processes.get(i)));
            }
        } catch (Exception | Error e) {
            s.close(); // no orphans: stop the ones that did start
            throw e;
        }
        Infra.say("%d sender process(es) running: %s", count, s.processes.stream().map(p -> p.instanceId() + " pid " + p.pid()).toList());
        return s;
    }

    /** Starts one more sender (e.g. a replacement after a kill) and waits until it runs. */
    public SenderProcess add(String instanceId) throws Exception {
        SenderProcess p = ready(SenderProcess.start(kind, instanceId, settings, tokens, workDir, heap));
        processes.add(p);
        return p;
    }

    /**
     * Waits until {@code p} runs; a child that exits during start (seen on this loaded machine: the first
     * Redis connect timing out, after which the sender exits) is started again, at most twice.
     */
    private SenderProcess ready(SenderProcess p) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                p.awaitReady(Duration.ofSeconds(120));
                return p;
            } catch (IllegalStateException e) {
                if (p.isAlive() || attempt == 3) {
                    p.close();
                    throw e;
                }
                Infra.say("%s exited during start (attempt %d), starting it again: %s", p.instanceId(), attempt,
                        e.getMessage().lines().skip(1).findFirst().orElse(""));
                p = SenderProcess.start(kind, p.instanceId(), settings, tokens, workDir, heap);
            }
        }
    }

    public List<SenderProcess> processes() {
        return processes;
    }

    /** The PIDs of the senders running now. */
    public List<Long> pids() {
        return processes.stream().map(SenderProcess::pid).toList();
    }

    /** CPU time of every sender started so far (a killed or stopped one counts what it used until then). */
    public Duration cpu() {
        Duration d = cpuOfStopped;
        for (SenderProcess p : processes) {
            d = d.plus(p.cpu());
        }
        return d;
    }

    /** Remembers the CPU {@code p} used so far, then SIGKILLs it ({@code kill -9}). */
    public void kill9(SenderProcess p) throws InterruptedException {
        cpuOfStopped = cpuOfStopped.plus(p.cpu());
        p.kill9();
        processes.remove(p);
    }

    @Override
    public void close() throws InterruptedException {
        for (SenderProcess p : processes) {
            cpuOfStopped = cpuOfStopped.plus(p.cpu());
        }
        // SIGTERM all first, so they leave the group together, then wait for each
        List<Thread> stoppers = new ArrayList<>();
        for (SenderProcess p : processes) {
            Thread t = new Thread(() -> {
                try {
                    p.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.start();
            stoppers.add(t);
        }
        for (Thread t : stoppers) {
            t.join();
        }
        processes.clear();
    }
}
