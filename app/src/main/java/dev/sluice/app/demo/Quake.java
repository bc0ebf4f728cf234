package dev.sluice.app.demo;

import java.time.Instant;

/**
 * One earthquake from a USGS ComCat extract.
 *
 * @param time      origin time (UTC)
 * @param magnitude magnitude (USGS preferred magnitude type)
 * @param place     USGS place description, e.g. {@code "94 km SE of Petropavlovsk-Kamchatsky, Russia"}
 * @param id        USGS event id, e.g. {@code us6000qw60}
 */
public record Quake(Instant time, double magnitude, String place, String id) {

    /** The region a subscriber follows: the text after the last comma of the place ("Russia"). */
    public String region() {
        String p = place.endsWith(" Earthquake") ? place.substring(0, place.length() - " Earthquake".length()) : place;
        int comma = p.lastIndexOf(", ");
        return (comma >= 0 ? p.substring(comma + 2) : p).trim();
    }
}
