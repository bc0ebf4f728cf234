package dev.sluice.sender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.config.Settings;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetListener;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.LimitKeyBudget;
import dev.sluice.sender.budget.LocalGcraBudget;
import dev.sluice.sender.budget.ResilientBudget;
import dev.sluice.testkit.MockHttpProvider;
import dev.sluice.testkit.MockHttpProvider.Answer;
import dev.sluice.testkit.MockHttpProvider.Request;
import dev.sluice.testkit.MockHttpProvider.RetryAfterStyle;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 8's first "done when": a mock provider at 5 requests/s per API key (burst 5) answering 429 with
 * Retry-After, called by "instances" that each own an {@link HttpProviderTransport} and a budget client, as
 * sender replicas do. Shared = one {@link ResilientBudget} per instance on one real redis-server, under the
 * provider's limit key. The forced Retry-After is 3 s here (10 s parsing in both forms is unit-tested in
 * {@code HttpProviderTransportTest} and {@code RetryAfterHeaderTest}).
 */
class HttpProviderBudgetIT {
    private static final String PROVIDER = "sms-api";
    private static final String API_KEY = "key-" + "a1b2c3";
    private static RedisInstance redis;
    private MockHttpProvider mock;
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeAll
    static void startRedis() {
        redis = RedisLauncher.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        if (mock != null) {
            mock.close();
        }
    }

    private Map<String, HttpProviderConfig> providers(String limitKey) {
        Map<String, String> m = new HashMap<>();
        m.put("provider." + PROVIDER + ".url.template", mock.url() + "/v1/messages");
        m.put("provider." + PROVIDER + ".header.X-Api-Key", "{token}");
        m.put("provider." + PROVIDER + ".body.template", "{\"to\":\"{chat}\",\"text\":\"{text}\"}");
        m.put("provider." + PROVIDER + ".limit.key", limitKey);
        m.put("provider." + PROVIDER + ".rate.per.s", "5");
        m.put("provider." + PROVIDER + ".burst", "1");
        m.put("provider." + PROVIDER + ".retry.after.json.field", "reset");
        m.put("provider." + PROVIDER + ".backoff.base.ms", "200");
        m.put("provider." + PROVIDER + ".response.expected.status", "200");
        m.put("provider." + PROVIDER + ".response.content.type", "application/json");
        m.put("provider." + PROVIDER + ".response.json.pointer", "/id");
        return HttpProviderConfig.all(Settings.of(m));
    }

    private HttpProviderTransport transport(Map<String, HttpProviderConfig> providers) {
        HttpProviderTransport t = new HttpProviderTransport(providers, Map.of(PROVIDER, new BotToken(API_KEY)),
                Duration.ofSeconds(2), Duration.ofSeconds(5));
        open.add(t);
        return t;
    }

    private static BudgetConfig budgetConfig(Map<String, HttpProviderConfig> providers) {
        return HttpProviderConfig.withProviderLimits(BudgetConfig.of(BudgetLimits.telegramDefaults()), providers);
    }

    /** One instance's budget client on the shared redis-server, deciding under the limit key. */
    private BudgetPort sharedBudget(Map<String, HttpProviderConfig> providers) {
        BudgetPort b = LimitKeyBudget.wrap(ResilientBudget.connect(redis.url(), budgetConfig(providers),
                Duration.ofMillis(500), BudgetListener.NONE, Clock.systemUTC()), HttpProviderConfig.limitKeys(providers));
        open.add(b);
        return b;
    }

    private ProviderClient client(ProviderClient c) {
        open.add(c);
        return c.start();
    }

    private static String uniqueKey(String what) {
        return "ext:sms-api:" + what + "-" + System.nanoTime();
    }

    private static double ratePerS(List<Request> accepted) {
        long first = accepted.get(0).atMillis();
        long last = accepted.get(accepted.size() - 1).atMillis();
        return (accepted.size() - 1) * 1000.0 / (last - first);
    }

    @Test
    void a_client_at_50_per_s_without_sluice_gets_many_429s() {
        mock = MockHttpProvider.start();
        HttpProviderTransport t = transport(providers(uniqueKey("raw")));
        ProviderClient c = client(ProviderClient.unpaced("raw", t, PROVIDER, 100, 50));
        await().atMost(Duration.ofSeconds(15)).until(c::isDone);
        double offered = ratePerS(mock.requests());
        System.out.printf("without Sluice at 50/s: %d calls at %.1f/s, %d accepted, %d answered 429%n",
                mock.requests().size(), offered, mock.accepted().size(), mock.count429());
        assertThat(mock.requests()).hasSize(100);
        assertThat(offered).as("the client really offered about 50/s").isGreaterThan(40);
        // 5 burst + 5/s over 2 s: about 15 accepted, the rest refused
        assertThat(mock.count429()).isGreaterThanOrEqualTo(70);
    }

    @Test
    void two_instances_through_the_shared_budget_get_no_429_at_about_5_per_s() {
        mock = MockHttpProvider.start();
        Map<String, HttpProviderConfig> providers = providers(uniqueKey("shared"));
        ProviderClient a = client(ProviderClient.throughBudget("a", sharedBudget(providers), transport(providers),
                PROVIDER, 12));
        ProviderClient b = client(ProviderClient.throughBudget("b", sharedBudget(providers), transport(providers),
                PROVIDER, 12));
        await().atMost(Duration.ofSeconds(20)).until(() -> a.isDone() && b.isDone());
        List<Request> accepted = mock.accepted();
        double rate = ratePerS(accepted);
        System.out.printf("two instances, shared budget: %d accepted at %.2f/s, %d answered 429%n", accepted.size(),
                rate, mock.count429());
        assertThat(mock.count429()).isZero();
        assertThat(accepted).hasSize(24);
        assertThat(a.delivered.get() + b.delivered.get()).isEqualTo(24);
        assertThat(accepted).extracting(Request::keyId).containsOnly(MockHttpProvider.keyId(API_KEY));
        assertThat(rate).isBetween(4.0, 5.2);
    }

    @Test
    void two_instances_with_local_limiters_each_at_5_per_s_get_429s() {
        mock = MockHttpProvider.start();
        Map<String, HttpProviderConfig> providers = providers(uniqueKey("local"));
        List<ProviderClient> clients = new ArrayList<>();
        for (String name : List.of("a", "b")) {
            BudgetPort local = LimitKeyBudget.wrap(new LocalGcraBudget(budgetConfig(providers), Clock.systemUTC()),
                    HttpProviderConfig.limitKeys(providers));
            open.add(local);
            clients.add(client(ProviderClient.throughBudget(name, local, transport(providers), PROVIDER, 12)));
        }
        await().atMost(Duration.ofSeconds(25)).until(() -> clients.stream().allMatch(ProviderClient::isDone));
        System.out.printf("two instances, local limiters: %d accepted, %d answered 429%n", mock.accepted().size(),
                mock.count429());
        assertThat(mock.count429()).isPositive();
        assertThat(mock.accepted()).hasSize(24);
    }

    @Test
    void retry_after_in_delta_seconds_silences_every_instance_then_they_resume() {
        silencesEveryInstance(RetryAfterStyle.DELTA_SECONDS);
    }

    @Test
    void retry_after_as_an_http_date_silences_every_instance_then_they_resume() {
        silencesEveryInstance(RetryAfterStyle.HTTP_DATE);
    }

    private void silencesEveryInstance(RetryAfterStyle style) {
        mock = MockHttpProvider.builder().retryAfter(style).start();
        String key = uniqueKey("penalty-" + style);
        Map<String, HttpProviderConfig> providers = providers(key);
        client(ProviderClient.throughBudget("a", sharedBudget(providers), transport(providers), PROVIDER, 1_000));
        client(ProviderClient.throughBudget("b", sharedBudget(providers), transport(providers), PROVIDER, 1_000));
        long t0 = System.nanoTime();
        await().atMost(Duration.ofSeconds(10)).until(() -> mock.accepted().size() >= 3);
        System.out.printf("first 3 accepted after %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        mock.forceRetryAfter(Duration.ofSeconds(3));
        long until = mock.forcedUntilMillis();
        await().atMost(Duration.ofSeconds(5)).until(() -> mock.count(Answer.FORCED_RETRY_AFTER) > 0);
        await().atMost(Duration.ofSeconds(15))
                .until(() -> mock.accepted().stream().filter(r -> r.atMillis() >= until).count() >= 5);

        List<Request> all = mock.requests();
        List<Request> forced = all.stream().filter(r -> r.answer() == Answer.FORCED_RETRY_AFTER).toList();
        Request resumed = all.stream().filter(r -> r.atMillis() >= until).findFirst().orElseThrow();
        List<Request> after = mock.accepted().stream().filter(r -> r.atMillis() >= until).limit(5).toList();
        double rateAfter = ratePerS(after);
        long silentMs = resumed.atMillis() - forced.get(0).atMillis();
        System.out.printf("Retry-After as %s (e.g. '%s'): %d call(s) during the 3 s penalty, silent for %d ms, "
                + "resumed %d ms after it ended at %.2f/s (AIMD)%n", style, forced.get(0).retryAfter(), forced.size(),
                silentMs, resumed.atMillis() - until, rateAfter);
        // at most the call each instance had in flight when the penalty began; nothing after the shared gate
        assertThat(forced.size()).isBetween(1, 2);
        assertThat(silentMs).isGreaterThanOrEqualTo(until - forced.get(0).atMillis());
        assertThat(resumed.atMillis() - until).as("resumes soon after the penalty (an HTTP-date is whole seconds)")
                .isLessThan(2_000);
        assertThat(mock.count(Answer.RATE_LIMITED)).as("the shared budget never exceeded the key").isZero();
        // AIMD: the 429 came although the shared budget had room, so the key's rate was cut (x0.5, then +5 %/s)
        assertThat(rateAfter).as("resumes below the configured 5/s").isLessThan(4.0);
    }
}
