package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PoolRankingTest {

    @Test
    void fewest_in_flight_first_then_most_headroom_then_the_pool_order() {
        Map<String, Integer> inFlight = Map.of("a", 3, "b", 1, "c", 1, "d", 1);
        Map<String, Long> nextFree = Map.of("a", 0L, "b", 500L, "c", 100L, "d", 100L);
        assertThat(PoolRanking.rank(List.of("a", "b", "c", "d"), inFlight::get, nextFree::get))
                .containsExactly("c", "d", "b", "a");
        assertThat(PoolRanking.rank(List.of("d", "c"), inFlight::get, nextFree::get)).containsExactly("d", "c");
        assertThat(PoolRanking.rank(List.of("a"), inFlight::get, nextFree::get)).containsExactly("a");
    }
}
