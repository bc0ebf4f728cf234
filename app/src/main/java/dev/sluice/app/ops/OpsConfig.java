package dev.sluice.app.ops;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import java.util.List;

/**
 * Where a long-running process serves its ops endpoints ({@code /metrics}, {@code /health/live},
 * {@code /health/ready}).
 *
 * <p>Keys: {@code ops.port} (default {@link #TOPOLOGY_DEFAULT_PORT} for {@code sluice topology},
 * {@link #SENDER_DEFAULT_PORT} for {@code sluice sender}, so both run on one host without clashing;
 * 0 picks a free port), {@code ops.bind.address} (default {@code 0.0.0.0}), {@code ops.enabled}
 * (default true). Environment: {@code SLUICE_OPS_PORT}, {@code SLUICE_OPS_BIND_ADDRESS},
 * {@code SLUICE_OPS_ENABLED}.
 *
 * @param enabled whether to serve at all
 * @param bindAddress the address to listen on (host name or IP)
 * @param port the TCP port, 0 for a free one
 */
public record OpsConfig(boolean enabled, String bindAddress, int port) {
    public static final String ENABLED = "ops.enabled";
    public static final String PORT = "ops.port";
    public static final String BIND_ADDRESS = "ops.bind.address";
    /** Default ops port of {@code sluice topology} (9464 is Prometheus' customary exporter port). */
    public static final int TOPOLOGY_DEFAULT_PORT = 9464;
    /** Default ops port of {@code sluice sender}. */
    public static final int SENDER_DEFAULT_PORT = 9465;
    public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";

    public OpsConfig {
        if (port < 0 || port > 65535) {
            throw new ConfigException(PORT, "invalid value '" + port + "' for config '" + PORT + "' (env "
                    + Settings.envName(PORT) + "): expected a TCP port 0..65535");
        }
        if (bindAddress == null || bindAddress.isBlank()) {
            throw new ConfigException(BIND_ADDRESS, "config '" + BIND_ADDRESS + "' must not be blank");
        }
    }

    /** Reads the ops keys; {@code defaultPort} is the process's own default. */
    public static OpsConfig from(Settings s, int defaultPort) {
        int port = Math.toIntExact(s.longValue(PORT, defaultPort, v -> v >= 0 && v <= 65535, "a TCP port 0..65535"));
        return new OpsConfig(s.bool(ENABLED, true), s.string(BIND_ADDRESS, DEFAULT_BIND_ADDRESS), port);
    }

    /** Every key this class reads. */
    public static List<String> keys() {
        return List.of(ENABLED, PORT, BIND_ADDRESS);
    }
}
