package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostBinariesTest {

    @Test
    void findsAProgramOnThePath() {
        assertThat(HostBinaries.find("sh")).hasValueSatisfying(p -> assertThat(Files.isExecutable(p)).isTrue());
    }

    @Test
    void fallsBackToTheGivenPathsOnlyWhenTheyAreExecutableFiles(@TempDir Path dir) throws Exception {
        Path notExecutable = Files.writeString(dir.resolve("plain"), "x");
        Path executable = Files.writeString(dir.resolve("tool"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(executable, PosixFilePermissions.fromString("rwxr-xr-x"));

        assertThat(HostBinaries.find("sluice-no-such-program", notExecutable, dir, executable)).contains(executable);
        assertThat(HostBinaries.find("sluice-no-such-program", notExecutable, dir)).isEmpty();
    }

    @Test
    void theReasonNamesTheProgramAndHowToGetIt() {
        assertThat(HostBinaries.missing("chromium", "install the Debian package 'chromium'"))
                .contains("'chromium' not found").contains("install the Debian package 'chromium'");
    }

    @Test
    void theRedisServerBinaryIsAlwaysThere() {
        assertThat(Files.isExecutable(RedisLauncher.serverBinary())).isTrue();
    }
}
