package dev.sluice.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock a test moves by hand (no sleeping); safe to read from other threads (servers, schedulers). */
public final class ManualClock extends Clock {
    private volatile Instant now;

    public ManualClock(Instant start) {
        this.now = start;
    }

    public ManualClock() {
        this(Instant.parse("2026-01-01T00:00:00Z"));
    }

    public synchronized void advance(Duration d) {
        now = now.plus(d);
    }

    public void setMillis(long epochMs) {
        now = Instant.ofEpochMilli(epochMs);
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
