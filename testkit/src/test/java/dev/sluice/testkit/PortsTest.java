package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PortsTest {

    @Test
    void freePortsAreDistinctAndBindable() throws Exception {
        for (int round = 0; round < 500; round++) {
            int[] ports = Ports.freePorts(8);
            assertThat(Arrays.stream(ports).distinct().count()).as("round %d: %s", round, Arrays.toString(ports)).isEqualTo(8);
        }
        int[] ports = Ports.freePorts(4);
        for (int port : ports) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                assertThat(socket.getLocalPort()).isEqualTo(port);
            }
        }
    }

    @Test
    void aCountBelowOneIsRefused() {
        assertThatThrownBy(() -> Ports.freePorts(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count 0");
    }
}
