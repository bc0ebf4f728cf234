package dev.sluice.topology;

import dev.sluice.limits.GcraPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The per-chat policy GCRA of a routing task ({@link ChatPolicy}), over {@value SluiceTopology#CHAT_POLICY_STORE}: the TAT
 * stored as {@code <rate count>:<tat>} (the TAT's scale depends on the count, so a changed rate starts from an empty TAT).
 * Moved out of {@link RouteProcessor} unchanged (issue 21). One instance per processor, used by its task's stream thread only.
 */
final class PolicyTats {
    static final int SWEEP_PER_PUNCTUATION = 1_000;

    private final ChatPolicy chatPolicy;
    private final KeyValueStore<String, String> store;
    private String sweepFrom;

    PolicyTats(ChatPolicy chatPolicy, KeyValueStore<String, String> store) {
        this.chatPolicy = chatPolicy;
        this.store = store;
    }

    /** Whether the chat's policy lets one more message go at {@code now}; when it does, the TAT moves on. */
    boolean allows(String chat, long now) {
        Optional<GcraPolicy> policy = chatPolicy.forChat(chat);
        if (policy.isEmpty()) {
            return true;
        }
        GcraPolicy p = policy.get();
        long tat = GcraPolicy.EMPTY_TAT;
        String stored = store.get(chat);
        if (stored != null) {
            int colon = stored.indexOf(':');
            if (colon > 0 && Long.parseLong(stored.substring(0, colon)) == p.scaledUnitsPerMilli()) {
                tat = Long.parseLong(stored.substring(colon + 1));
            }
        }
        GcraPolicy.Result r = p.decide(tat, now);
        if (r.decision().allowed()) {
            store.put(chat, p.scaledUnitsPerMilli() + ":" + r.tat());
        }
        return r.decision().allowed();
    }

    /**
     * Deletes up to {@value #SWEEP_PER_PUNCTUATION} TATs of chats that are idle again (a full burst: the same as never
     * seen), continuing from where the last sweep stopped, so the store holds the chats active within about one burst
     * time, not every chat ever seen.
     */
    void sweepIdle(long now) {
        List<String> idle = new ArrayList<>();
        String last = null;
        int seen = 0;
        try (KeyValueIterator<String, String> it = store.range(sweepFrom, null)) {
            while (it.hasNext() && seen < SWEEP_PER_PUNCTUATION) {
                KeyValue<String, String> kv = it.next();
                seen++;
                last = kv.key;
                Optional<GcraPolicy> policy = chatPolicy.forChat(kv.key);
                int colon = kv.value.indexOf(':');
                if (policy.isEmpty() || colon <= 0 || Long.parseLong(kv.value.substring(0, colon)) != policy.get().scaledUnitsPerMilli()
                        || policy.get().millisUntilIdle(Long.parseLong(kv.value.substring(colon + 1)), now) == 0) {
                    idle.add(kv.key);
                }
            }
            sweepFrom = it.hasNext() && last != null ? last + "\u0000" : null;
        }
        idle.forEach(store::delete);
    }
}
