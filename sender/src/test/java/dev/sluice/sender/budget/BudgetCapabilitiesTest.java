package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.metrics.BudgetState;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Finding F7: a budget that inherits a {@link BudgetPort} capability default silently turns that capability off
 * for every bot of the process. Every production implementation must state each capability itself (or inherit
 * it from {@link ForwardingBudget}, which forwards it), and the decorators forward them, re-keyed where they
 * re-key.
 */
class BudgetCapabilitiesTest {
    /** The BudgetPort methods with a default that means "capability off". */
    private static final List<String> CAPABILITIES = List.of("reportLateAnswer", "sentMarksRedisUrl", "startDrained",
            "reserves", "redisRoundTrips", "foldMarkWrites", "probe");

    @Test
    void no_production_budget_inherits_a_capability_default() throws Exception {
        List<Class<?>> budgets = productionBudgets();
        assertThat(budgets).as("found by scanning the sender's classes").contains(RedisGcraBudget.class,
                LocalGcraBudget.class, ResilientBudget.class, LimitKeyBudget.class, ForwardingBudget.class,
                dev.sluice.sender.budget.quota.QuotaBudget.class);
        List<String> inherited = new ArrayList<>();
        for (Class<?> c : budgets) {
            for (Method m : BudgetPort.class.getMethods()) {
                if (CAPABILITIES.contains(m.getName())
                        && c.getMethod(m.getName(), m.getParameterTypes()).getDeclaringClass() == BudgetPort.class) {
                    inherited.add(c.getSimpleName() + "." + m.getName());
                }
            }
        }
        assertThat(inherited).isEmpty();
    }

    @Test
    void the_guard_sees_a_class_that_inherits_a_default() throws Exception {
        class Forgetful implements BudgetPort {
            public Decision tryAcquire(BudgetRequest request) {
                return Decision.grant();
            }

            public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
            }

            public BudgetState state() {
                return BudgetState.SHARED;
            }

            public void close() {
            }
        }
        assertThat(Forgetful.class.getMethod("reserves").getDeclaringClass()).isEqualTo(BudgetPort.class);
    }

    @Test
    void the_limit_key_decorator_forwards_every_capability_and_re_keys_provider_ids() {
        Recording inner = new Recording();
        BudgetPort b = new LimitKeyBudget(inner, Map.of("sms", "ext:sms"));
        assertThat(b.reserves()).isTrue();
        assertThat(b.sentMarksRedisUrl()).contains("redis://marks");
        assertThat(b.redisRoundTrips()).isEqualTo(7);
        b.reportLateAnswer("sms", 3);
        b.reportLateAnswer("tg", 4);
        b.startDrained("sms");
        b.startDrained("tg");
        b.probe();
        assertThat(inner.calls).containsExactly("late ext:sms 3", "late tg 4", "drained ext:sms", "drained tg", "probe");

        b.tryAcquire(BudgetRequest.live("tg", "1").checkingSentMark("m-1").reservingUpTo(Duration.ofMillis(500)));
        b.tryAcquire(BudgetRequest.live("sms", "1").checkingSentMark("m-2").reservingUpTo(Duration.ofMillis(500)));
        BudgetRequest telegram = inner.requests.get(0);
        BudgetRequest provider = inner.requests.get(1);
        assertThat(telegram.sentMarkId()).as("a Telegram bot's mark shares its budget's tag").isEqualTo("m-1");
        assertThat(telegram.reserveUpTo()).isEqualTo(Duration.ofMillis(500));
        assertThat(provider.botId()).isEqualTo("ext:sms");
        assertThat(provider.reserveUpTo()).as("reservations survive the re-keying").isEqualTo(Duration.ofMillis(500));
        assertThat(provider.sentMarkId()).as("sluice:{sms}:sent:* cannot be read under the tag {ext:sms}").isNull();
    }

    /** A budget with every capability on, recording what reaches it. */
    private static final class Recording implements BudgetPort {
        final List<String> calls = new ArrayList<>();
        final List<BudgetRequest> requests = new ArrayList<>();

        @Override
        public Decision tryAcquire(BudgetRequest request) {
            requests.add(request);
            return Decision.grant();
        }

        @Override
        public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        }

        @Override
        public void reportLateAnswer(String botId, long grantSeq) {
            calls.add("late " + botId + " " + grantSeq);
        }

        @Override
        public BudgetState state() {
            return BudgetState.SHARED;
        }

        @Override
        public Optional<String> sentMarksRedisUrl() {
            return Optional.of("redis://marks");
        }

        @Override
        public void startDrained(String botId) {
            calls.add("drained " + botId);
        }

        @Override
        public boolean reserves() {
            return true;
        }

        @Override
        public long redisRoundTrips() {
            return 7;
        }

        @Override
        public void probe() {
            calls.add("probe");
        }

        @Override
        public void close() {
        }
    }

    /** Every concrete or abstract class of the sender's main classes that implements BudgetPort. */
    private static List<Class<?>> productionBudgets() throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(BudgetPort.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> names;
        try (Stream<Path> files = Files.walk(root)) {
            names = files.map(p -> root.relativize(p).toString()).filter(n -> n.endsWith(".class"))
                    .map(n -> n.substring(0, n.length() - ".class".length()).replace('/', '.')).toList();
        }
        List<Class<?>> out = new ArrayList<>();
        for (String n : names) {
            Class<?> c = Class.forName(n, false, BudgetPort.class.getClassLoader());
            if (BudgetPort.class.isAssignableFrom(c) && !c.isInterface() && !c.isAnonymousClass()
                    && !Modifier.isPrivate(c.getModifiers())) {
                out.add(c);
            }
        }
        return out;
    }
}
