package dev.sluice.bench;

/**
 * What the sender children wrote to their logs ({@code <prefix>-<i>.log} in the bench's work directory), counted after a
 * run: budget state changes and other lines a scenario looks for. Stateless; any thread.
 */
final class SenderLogs {
    private SenderLogs() {
    }

    /** Lines {@code budget state A -> B} in the senders' logs ({@code <prefix>-<i>.log} in the work directory). */
    static long budgetStateChanges(java.nio.file.Path workDir, String prefix, int senders) throws java.io.IOException {
        return lines(workDir, prefix, senders, "budget state ");
    }

    /** Lines containing {@code needle} in the senders' logs ({@code <prefix>-<i>.log} in the work directory). */
    static long lines(java.nio.file.Path workDir, String prefix, int senders, String needle) throws java.io.IOException {
        long n = 0;
        for (int i = 1; i <= senders; i++) {
            java.nio.file.Path log = workDir.resolve(prefix + "-" + i + ".log");
            if (java.nio.file.Files.exists(log)) {
                try (var lines = java.nio.file.Files.lines(log, java.nio.charset.StandardCharsets.UTF_8)) {
                    n += lines.filter(l -> l.contains(needle)).count();
                }
            }
        }
        return n;
    }
}
