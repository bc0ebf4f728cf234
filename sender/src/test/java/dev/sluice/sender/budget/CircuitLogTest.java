package dev.sluice.sender.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.resilience4j.circuitbreaker.CircuitBreaker.StateTransition;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A Redis outage logs the circuit opening and closing, not the probes in between. */
class CircuitLogTest {

    @Test
    void onlyOpeningAndClosingAreWarnings() {
        List<StateTransition> warned = Arrays.stream(StateTransition.values()).filter(t -> !CircuitLog.isProbe(t))
                .filter(t -> List.of(StateTransition.CLOSED_TO_OPEN, StateTransition.HALF_OPEN_TO_OPEN,
                        StateTransition.OPEN_TO_HALF_OPEN, StateTransition.HALF_OPEN_TO_CLOSED).contains(t))
                .toList();
        assertEquals(List.of(StateTransition.CLOSED_TO_OPEN, StateTransition.HALF_OPEN_TO_CLOSED), warned);
    }
}
