package dev.sluice.sender.budget.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.testkit.PostgresInstance;
import dev.sluice.testkit.PostgresLauncher;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PostgresQuota alone against a real PostgreSQL: leases never let the total pass the quota (also when a
 * process dies holding one), a lease never outlives its window, and what leasing saves in round trips.
 */
class PostgresQuotaIT {
    private static PostgresInstance pg;

    @BeforeAll
    static void startPostgres() {
        PostgresLauncher.unavailableReason().ifPresent(reason -> assumeTrue(false, reason));
        pg = PostgresLauncher.start();
    }

    @AfterAll
    static void stopPostgres() {
        if (pg != null) {
            pg.close();
        }
    }

    private static String key(String name) {
        return name + "-" + Long.toString(System.nanoTime(), 36);
    }

    private static QuotaConfig config(String key, long limit, Duration window, int lease) {
        return QuotaConfig.builder(pg.jdbcUrl()).credentials(PostgresInstance.USER, null).limit(key, limit, window)
                .leaseSize(lease).probeInterval(Duration.ofMillis(200)).build();
    }

    private static Connection connect() throws java.sql.SQLException {
        return DriverManager.getConnection(pg.jdbcUrl(), PostgresInstance.USER, "");
    }

    @Test
    void a_process_that_dies_holding_a_lease_loses_those_units_and_the_total_never_passes_the_quota() throws Exception {
        String key = key("crash");
        QuotaConfig config = config(key, 50, Duration.ofDays(100), 10);
        AtomicReference<Connection> aConnection = new AtomicReference<>();
        PostgresQuota a = new PostgresQuota(config, () -> {
            Connection c = connect();
            aConnection.set(c);
            return c;
        }, System::nanoTime);
        for (int i = 0; i < 3; i++) {
            assertThat(a.take(key).granted()).isTrue();
        }
        aConnection.get().close(); // "kill -9": 7 leased units never given back, never handed out
        try (PostgresQuota b = new PostgresQuota(config)) {
            int granted = 0;
            Decision d;
            while ((d = b.take(key)).granted()) {
                granted++;
            }
            assertThat(d.limit()).isEqualTo(Limit.QUOTA);
            assertThat(granted).as("50 - the 10 leased by the dead process").isEqualTo(40);
            assertThat(b.usage(key).orElseThrow().used()).isEqualTo(50);
        }
        assertThat(a.granted() + 40).isLessThanOrEqualTo(50);
    }

    @Test
    void close_gives_unused_leased_units_back() throws Exception {
        String key = key("giveback");
        QuotaConfig config = config(key, 30, Duration.ofDays(100), 10);
        try (PostgresQuota a = new PostgresQuota(config)) {
            assertThat(a.take(key).granted()).isTrue();
            assertThat(a.usage(key).orElseThrow().used()).isEqualTo(10);
        }
        try (PostgresQuota b = new PostgresQuota(config)) {
            assertThat(b.usage(key).orElseThrow().used()).as("9 given back on close").isEqualTo(1);
            int granted = 0;
            while (b.take(key).granted()) {
                granted++;
            }
            assertThat(granted).isEqualTo(29);
        }
    }

    @Test
    void a_lease_ends_with_its_window() throws Exception {
        String key = key("window");
        Duration window = Duration.ofSeconds(2);
        try (PostgresQuota a = new PostgresQuota(config(key, 1000, window, 10))) {
            assertThat(a.take(key).granted()).isTrue(); // leases 10 in window W
            long w = a.usage(key).orElseThrow().windowId();
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                    .until(() -> a.usage(key).orElseThrow().windowId() > w);
            assertThat(a.take(key).granted()).isTrue(); // must not come from W's lease
            PostgresQuota.Usage next = a.usage(key).orElseThrow();
            assertThat(next.windowId()).isGreaterThan(w);
            assertThat(next.used()).as("a fresh lease counted in the new window").isEqualTo(10);
        }
    }

    @Test
    void many_threads_and_instances_are_granted_exactly_the_quota_and_leases_cut_round_trips() throws Exception {
        for (int lease : new int[] {1, 10}) {
            String key = key("race" + lease);
            QuotaConfig config = config(key, 600, Duration.ofDays(100), lease);
            List<PostgresQuota> instances = List.of(new PostgresQuota(config), new PostgresQuota(config), new PostgresQuota(config));
            ExecutorService pool = Executors.newFixedThreadPool(9);
            long start = System.nanoTime();
            try {
                List<Future<Integer>> counts = new ArrayList<>();
                for (int t = 0; t < 9; t++) {
                    PostgresQuota q = instances.get(t % 3);
                    counts.add(pool.submit(() -> {
                        int n = 0;
                        while (true) {
                            Decision d = q.take(key);
                            if (d.granted()) {
                                n++;
                            } else if (d.limit() == Limit.QUOTA && d.retryIn().toDays() >= 1) {
                                return n;
                            }
                        }
                    }));
                }
                int total = 0;
                for (Future<Integer> f : counts) {
                    total += f.get(30, TimeUnit.SECONDS);
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                long trips = instances.stream().mapToLong(PostgresQuota::roundTrips).sum();
                assertThat(total).isEqualTo(600);
                assertThat(instances.get(0).usage(key).orElseThrow().used()).isEqualTo(600);
                System.out.printf("PostgresQuotaIT: lease %d: 600 granted to 9 threads of 3 instances in %.2f s "
                        + "(%.0f/s), %d PostgreSQL statements (%.2f per grant)%n", lease, seconds, 600 / seconds, trips,
                        trips / 600.0);
                if (lease == 10) {
                    assertThat(trips).as("leases of 10 cut round trips").isLessThan(200);
                }
            } finally {
                pool.shutdownNow();
                instances.forEach(PostgresQuota::close);
            }
        }
    }
}
