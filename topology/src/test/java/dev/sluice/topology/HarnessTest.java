package dev.sluice.topology;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fixture of the tests that drive the whole topology through a {@link Harness}: a state directory of their own per
 * test, and the harness (set by the test, at most one at a time) closed after each test.
 */
abstract class HarnessTest {
    @TempDir
    Path stateDir;
    Harness h;

    @AfterEach
    void closeHarness() {
        if (h != null) {
            h.close();
        }
    }
}
