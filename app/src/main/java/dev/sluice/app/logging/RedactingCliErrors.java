package dev.sluice.app.logging;

import dev.sluice.config.ConfigException;
import dev.sluice.config.SecretRedaction;
import java.io.PrintWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * Picocli's error paths with every secret removed ({@link SecretRedaction}): without these handlers
 * picocli prints an exception's stack trace, and a parameter error's text, straight to stderr, past the
 * logging encoder, so a Redis URL with a password or a library message quoting a key would reach the
 * terminal.
 *
 * <p>An exception from a command prints one line on stderr, {@code sluice <command>: <message>} (the
 * message and its causes' messages, redacted) and exits 1 (or the command's mapped exit code); the stack
 * trace is logged at DEBUG through SLF4J, whose {@link RedactingEncoder} redacts it too. A parameter error
 * prints its redacted message, picocli's suggestions and the usage, and exits with the command's invalid-input
 * code (2). Stateless: safe on any thread.
 */
public final class RedactingCliErrors implements IExecutionExceptionHandler, IParameterExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(RedactingCliErrors.class);
    /** Causes shown after the message: enough for "connect failed: host:port", bounded for deep chains. */
    private static final int MAX_CAUSES_SHOWN = 3;

    /**
     * Installs both handlers on {@code commandLine} (and so on its subcommands), and makes its out and err
     * writers (which commands print their own errors to) redact each line.
     */
    public static CommandLine install(CommandLine commandLine) {
        RedactingCliErrors handler = new RedactingCliErrors();
        return commandLine.setExecutionExceptionHandler(handler).setParameterExceptionHandler(handler)
                .setOut(redacting(System.out)).setErr(redacting(System.err));
    }

    private static PrintWriter redacting(java.io.OutputStream stream) {
        return new PrintWriter(new java.io.OutputStreamWriter(new RedactingOutputStream(stream), java.nio.charset.StandardCharsets.UTF_8), true);
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine commandLine, ParseResult parseResult) {
        PrintWriter err = commandLine.getErr();
        err.println(commandLine.getCommandSpec().qualifiedName() + ": " + describe(ex));
        err.flush();
        log.debug("{} failed", commandLine.getCommandSpec().qualifiedName(), ex);
        return commandLine.getExitCodeExceptionMapper() != null
                ? commandLine.getExitCodeExceptionMapper().getExitCode(ex)
                : commandLine.getCommandSpec().exitCodeOnExecutionException();
    }

    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println(dev.sluice.chat.Identifiers.escapeInvisible(SecretRedaction.redact(ex.getMessage())));
        if (!CommandLine.UnmatchedArgumentException.printSuggestions(ex, err)) {
            err.print(SecretRedaction.redact(cmd.getUsageMessage()));
        }
        err.flush();
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    /** The exception's message and up to {@value #MAX_CAUSES_SHOWN} causes, redacted, on one line. */
    public static String describe(Throwable ex) {
        StringBuilder sb = new StringBuilder(text(ex));
        int shown = 0;
        for (Throwable c = ex.getCause(); c != null && c != c.getCause() && shown < MAX_CAUSES_SHOWN; c = c.getCause(), shown++) {
            String t = text(c);
            if (sb.indexOf(t) < 0) {
                sb.append(": ").append(t);
            }
        }
        // a message quoting input (an id, a key) must not reach the terminal with its invisible characters raw
        return dev.sluice.chat.Identifiers.escapeInvisible(SecretRedaction.redact(sb.toString().replaceAll("\\R", " ")));
    }

    private static String text(Throwable t) {
        String m = t.getMessage();
        if (t instanceof ConfigException c) {
            return dev.sluice.app.ConfigOrigins.message(c);
        }
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : t.getClass().getSimpleName() + ": " + m;
    }
}
