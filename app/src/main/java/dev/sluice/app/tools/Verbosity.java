package dev.sluice.app.tools;

import picocli.CommandLine.Option;

/**
 * {@code --verbose}, shared by the tools: stack traces on errors and framework logs (Kafka, Streams) on the
 * terminal instead of a log file. Set once by picocli on the main thread, read afterwards.
 */
public final class Verbosity {
    @Option(names = "--verbose", description = "Print stack traces on errors and framework logs (Kafka, Streams) on the terminal.")
    boolean verbose;

    public boolean verbose() {
        return verbose;
    }
}
