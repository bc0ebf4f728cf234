package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.junit.jupiter.api.Test;

class StreamThreadReplacementsTest {
    private final AtomicLong nowMs = new AtomicLong(1_000_000);
    private final Clock clock = new Clock() {
        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(nowMs.get());
        }
    };

    @Test
    void replacesUpToMaxWithinTheWindowThenShutsTheClientDown() {
        AtomicInteger replaced = new AtomicInteger();
        AtomicInteger shutDown = new AtomicInteger();
        StreamThreadReplacements policy = new StreamThreadReplacements(2, 60_000, clock,
                r -> (r ? replaced : shutDown).incrementAndGet());
        RuntimeException boom = new RuntimeException("deterministic");
        assertThat(policy.handle(boom)).isEqualTo(StreamThreadExceptionResponse.REPLACE_THREAD);
        nowMs.addAndGet(10_000);
        assertThat(policy.handle(boom)).isEqualTo(StreamThreadExceptionResponse.REPLACE_THREAD);
        nowMs.addAndGet(10_000);
        assertThat(policy.handle(boom)).isEqualTo(StreamThreadExceptionResponse.SHUTDOWN_CLIENT);
        assertThat(policy.replacements()).isEqualTo(2);
        assertThat(replaced).hasValue(2);
        assertThat(shutDown).hasValue(1);
    }

    @Test
    void failuresFurtherApartThanTheWindowAreEachReplaced() {
        StreamThreadReplacements policy = new StreamThreadReplacements(1, 60_000, clock, r -> { });
        for (int i = 0; i < 5; i++) {
            assertThat(policy.handle(new RuntimeException("transient"))).isEqualTo(StreamThreadExceptionResponse.REPLACE_THREAD);
            nowMs.addAndGet(60_000);
        }
        assertThat(policy.replacements()).isEqualTo(5);
    }

    @Test
    void zeroMeansTheFirstFailureShutsDown() {
        StreamThreadReplacements policy = new StreamThreadReplacements(0, 60_000, clock, r -> { });
        assertThat(policy.handle(new RuntimeException("x"))).isEqualTo(StreamThreadExceptionResponse.SHUTDOWN_CLIENT);
    }
}
