package dev.sluice.topology;

import dev.sluice.avro.Preference;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Digest opt-out (DESIGN.md, Event classes: a user may opt out of digests), read from the global store
 * {@value SluiceTopology#PREFERENCES_STORE} (a copy of the compacted {@code preferences}, key user id).
 * An unreadable entry counts as no preference. A user without an entry is answered from memory ({@link PreferenceKeys}).
 */
final class DigestPreferences {
    private final ReadOnlyKeyValueStore<String, byte[]> store;
    private final Deserializer<Preference> deserializer;
    private final String topic;
    private final PreferenceKeys keys;

    DigestPreferences(ReadOnlyKeyValueStore<String, byte[]> store, Deserializer<Preference> deserializer, String topic,
                      PreferenceKeys keys) {
        this.store = store;
        this.deserializer = deserializer;
        this.topic = topic;
        this.keys = keys;
    }

    boolean optedOut(String userId) {
        if (!keys.mayHave(store, userId)) {
            return false;
        }
        byte[] raw = store.get(userId);
        if (raw == null) {
            return false;
        }
        try {
            return deserializer.deserialize(topic, raw).getDigestOptOut();
        } catch (RuntimeException e) {
            return false;
        }
    }
}
