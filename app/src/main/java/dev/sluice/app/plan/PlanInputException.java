package dev.sluice.app.plan;

/** Bad input to {@code sluice plan}; the message names the file, line, field and value. */
final class PlanInputException extends Exception {
    PlanInputException(String message) {
        super(message);
    }
}
