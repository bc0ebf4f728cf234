package dev.sluice.sender.budget;

import io.lettuce.core.metrics.MicrometerCommandLatencyRecorder;
import io.lettuce.core.metrics.MicrometerOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Lettuce client resources of the sender's Redis clients: reconnect attempts back off to at most 1 s (Lettuce's
 * default is 30 s), so shared mode resumes soon after Redis returns, and, when a registry is given, Lettuce's
 * own command latencies are recorded in it (Lettuce's {@link MicrometerCommandLatencyRecorder}: timers
 * {@code lettuce.command.completion} and {@code lettuce.command.firstresponse}, tagged {@code command},
 * {@code remote}, and {@code client} = the Sluice client: {@code budget} or {@code sent_marks}).
 */
public final class LettuceResources {
    /** Lettuce's timer of whole command round trips (sent until completed). */
    public static final String COMMAND_COMPLETION = "lettuce.command.completion";
    /** Lettuce's timer until the first byte of the reply. */
    public static final String COMMAND_FIRST_RESPONSE = "lettuce.command.firstresponse";

    /** The longest wait between two reconnect attempts: a Redis back is reconnected to within it. */
    public static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);

    private LettuceResources() {
    }

    /**
     * @param registry where Lettuce records its command latencies; null: none recorded
     * @param client   the {@code client} tag value
     */
    public static ClientResources create(MeterRegistry registry, String client) {
        DefaultClientResources.Builder b = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(10), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS));
        if (registry != null) {
            b.commandLatencyRecorder(new MicrometerCommandLatencyRecorder(registry,
                    MicrometerOptions.builder().tags(Tags.of("client", client)).build()));
        }
        return b.build();
    }
}
