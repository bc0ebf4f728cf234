package dev.sluice.app.tools;

import dev.sluice.config.ConfigException;
import dev.sluice.config.SecretRedaction;
import dev.sluice.schemas.SchemaRegistryException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.ParameterException;

/**
 * Runs a tool's body and turns the failures a user can fix into one line on stderr: a config error names the
 * key ({@link ConfigException}), an unreachable Kafka or registry names the address ({@link ToolException}).
 * Anything else is one line too, with its type. The stack trace follows only with {@code --verbose}. User info in
 * URLs ({@code http://user:pass@host}) and bot tokens are removed from every line printed here. While the body
 * runs without {@code --verbose}, the Kafka clients log only errors (their WARN lines repeat every reconnect
 * attempt); the level is put back afterwards. Stateless.
 */
public final class ToolErrors {
    /** Exit code when a tool cannot start or go on (config, unreachable Kafka or registry). */
    public static final int EXIT_CANNOT_RUN = 2;

    private ToolErrors() {
    }

    /**
     * @param name the command's name, the prefix of the line ({@code produce: ...})
     * @return the body's exit code, or {@link #EXIT_CANNOT_RUN} after printing the failure
     * @throws ParameterException unchanged: picocli prints usage errors itself
     */
    public static int run(String name, PrintWriter err, boolean verbose, Callable<Integer> body) {
        ch.qos.logback.classic.Logger kafka = null;
        ch.qos.logback.classic.Level before = null;
        if (!verbose && org.slf4j.LoggerFactory.getILoggerFactory() instanceof ch.qos.logback.classic.LoggerContext ctx) {
            kafka = ctx.getLogger("org.apache.kafka");
            before = kafka.getLevel();
            kafka.setLevel(ch.qos.logback.classic.Level.ERROR);
        }
        try {
            return call(name, err, verbose, body);
        } finally {
            if (kafka != null) {
                kafka.setLevel(before);
            }
        }
    }

    private static int call(String name, PrintWriter err, boolean verbose, Callable<Integer> body) {
        try {
            return body.call();
        } catch (ParameterException e) {
            throw e;
        } catch (ConfigException e) {
            // where to set a value helps with a missing or invalid one, not with an unknown key or an unreadable file
            boolean settable = !"config".equals(e.key()) && !e.getMessage().startsWith("unknown config");
            return fail(name, err, verbose, e, dev.sluice.app.ConfigOrigins.message(e) + (settable ? "; set it in --config FILE, with -D " + e.key()
                    + "=... or in the environment" : ""));
        } catch (ToolException e) {
            return fail(name, err, verbose, e, e.getMessage());
        } catch (SchemaRegistryException e) {
            return fail(name, err, verbose, e, "schema registry: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail(name, err, verbose, e, "interrupted");
        } catch (Exception e) {
            return fail(name, err, verbose, e, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static int fail(String name, PrintWriter err, boolean verbose, Exception e, String line) {
        err.println(name + ": " + safe(line) + (verbose ? "" : " (--verbose for details)"));
        if (verbose) {
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            err.print(safe(trace.toString()));
        }
        err.flush();
        return EXIT_CANNOT_RUN;
    }

    /**
     * {@code text} as it may be printed: the one redaction every process uses ({@link SecretRedaction#redact}:
     * URL user info and password parameters, bot tokens, and every secret value this process has held).
     */
    public static String safe(String text) {
        return text == null ? "" : SecretRedaction.redact(text);
    }
}
