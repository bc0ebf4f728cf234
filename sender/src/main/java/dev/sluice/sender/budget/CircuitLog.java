package dev.sluice.sender.budget;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.slf4j.Logger;

/**
 * How the budget's circuit transitions are logged: opening and closing are the outage's state changes (WARN); each
 * probe, OPEN -> HALF_OPEN -> OPEN every probe interval while Redis stays down, is at DEBUG, so a long outage does
 * not write two lines per probe ({@code ProviderBreakers} logs its probes by the same rule). Stateless: called on whichever thread the breaker transitions.
 */
public final class CircuitLog {
    private CircuitLog() {
    }

    /** True when {@code t} is part of a probe that did not close the circuit (also the provider breakers' rule). */
    public static boolean isProbe(CircuitBreaker.StateTransition t) {
        return t.getToState() == CircuitBreaker.State.HALF_OPEN
                || t.getFromState() == CircuitBreaker.State.HALF_OPEN && t.getToState() == CircuitBreaker.State.OPEN;
    }

    static void transition(Logger log, CircuitBreaker.StateTransition t) {
        if (isProbe(t)) {
            log.debug("budget circuit {}", t);
        } else {
            log.warn("budget circuit {}", t);
        }
    }
}
