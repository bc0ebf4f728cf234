package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisNode;
import dev.sluice.testkit.RedisSentinels;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Three real senders (each its own SenderService, Kafka consumer, producer and Redis connections) on a local
 * 3-primary Redis Cluster and on a Sentinel set, delivering to FakeTelegram through the embedded broker:
 * <ul>
 *   <li>steady: bots whose slots live on at least two primaries, every message delivered once in per-chat order,
 *       0 x 429 at a provider that enforces the limit;</li>
 *   <li>failover: kill -9 of the primary that owns the busy bot's slot (cluster) or of the Sentinel primary
 *       mid-run: the replica is promoted, the senders follow it, every message has exactly one result and one
 *       acceptance, and the most calls the provider saw in any sliding second is measured and held to the bound of
 *       {@code budget.redis.failover.policy=drained-restart} (docs/operations.md, "Redis failover"). The provider
 *       here accepts everything so that what arrives above the limit is counted, not refused.</li>
 * </ul>
 */
class RedisFailoverSendersIT {
    private static final Map<String, String> BOTS = Map.of(
            "alerts", dev.sluice.testkit.FakeTokens.of("111111111"),
            "quakes", dev.sluice.testkit.FakeTokens.of("222222222"),
            "billing", dev.sluice.testkit.FakeTokens.of("333333333"));
    /** The provider's limit per bot in these tests, and the budget's rate under it. */
    private static final int PROVIDER_PER_S = 50;
    private static final String BUDGET_PER_S = "45";

    private static FakeTelegram enforcing;
    private static FakeTelegram counting;

    @BeforeAll
    static void providers() {
        SenderIt.start();
        enforcing = FakeTelegram.builder().limits(FakeTelegramLimits.telegram().withGlobalPerSecond(PROVIDER_PER_S)
                .withChatPerSecond(1000).withChatBurst(100)).threads(32).start();
        counting = FakeTelegram.builder().limits(FakeTelegramLimits.unlimited()).threads(32).start();
    }

    @AfterAll
    static void stopProviders() {
        enforcing.close();
        counting.close();
    }

    @Test
    void threeSendersOnAClusterDeliverBotsOnDifferentPrimariesWithin0x429() {
        try (RedisCluster cluster = RedisCluster.start(3, 1)) {
            Set<Integer> primaries = new HashSet<>();
            BOTS.keySet().forEach(bot -> primaries.add(cluster.primaryOf(BudgetKeys.botState(bot)).orElseThrow().port()));
            assertThat(primaries).as("the bots' slots live on different primaries").hasSizeGreaterThanOrEqualTo(2);
            Run run = new Run("rc-steady", "redis-cluster://" + cluster.nodes().get(0).address(), enforcing);
            List<OutboundMessage> messages = new ArrayList<>();
            for (String bot : BOTS.keySet()) {
                messages.addAll(messages(bot, 30, 6));
            }
            run.deliver(messages, r -> { });
            assertThat(enforcing.rejected429Count()).isZero();
            assertThat(enforcing.maxBotMessagesPer(Duration.ofSeconds(1))).isLessThanOrEqualTo(PROVIDER_PER_S);
        }
    }

    @Test
    void aClusterPrimaryKilledMidRunLosesNothingSendsNothingTwiceAndStaysWithinTheBound() {
        try (RedisCluster cluster = RedisCluster.start(3, 1)) {
            String key = BudgetKeys.botState("alerts");
            Run run = new Run("rc-failover", "redis-cluster://" + cluster.seeds(), counting);
            List<OutboundMessage> messages = new ArrayList<>(messages("alerts", 60, 12));
            messages.addAll(messages("quakes", 20, 6));
            run.deliver(messages, r -> {
                RedisNode owner = cluster.primaryOf(key).orElseThrow();
                cluster.kill9(owner);
                long killedAt = System.currentTimeMillis();
                RedisNode promoted = cluster.awaitPrimaryOf(key, owner, Duration.ofSeconds(30));
                System.out.printf("RedisFailoverSendersIT cluster: killed %s, %s promoted after %d ms%n", owner, promoted,
                        System.currentTimeMillis() - killedAt);
            });
        }
    }

    @Test
    void theSentinelPrimaryKilledMidRunLosesNothingSendsNothingTwiceAndStaysWithinTheBound() {
        try (RedisSentinels set = RedisSentinels.start(1, 3)) {
            Run run = new Run("rs-failover", set.url(), counting);
            run.deliver(messages("alerts", 60, 12), r -> {
                RedisNode primary = set.primary().orElseThrow();
                primary.kill9();
                long killedAt = System.currentTimeMillis();
                RedisNode promoted = set.awaitFailover(primary, Duration.ofSeconds(30));
                System.out.printf("RedisFailoverSendersIT sentinel: killed %s, %s promoted after %d ms%n", primary,
                        promoted, System.currentTimeMillis() - killedAt);
            });
        }
    }

    private static List<OutboundMessage> messages(String bot, int chats, int perChat) {
        List<OutboundMessage> out = new ArrayList<>();
        for (int seq = 0; seq < perChat; seq++) {
            for (int c = 0; c < chats; c++) {
                String chat = Integer.toString(500_000 + c);
                out.add(SenderIt.message(bot + "-" + chat + "-" + seq, bot, chat).setText(bot + " to " + chat + " #" + seq)
                        .build());
            }
        }
        return out;
    }

    /** One run of three senders against one Redis deployment and one provider. */
    private record Run(String prefix, String redisUrl, FakeTelegram provider) {
        void deliver(List<OutboundMessage> messages, Consumer<Run> midRun) {
            SenderIt.topics(prefix, 6);
            provider.reset();
            List<SenderService> senders = new ArrayList<>();
            try (SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                for (int i = 1; i <= 3; i++) {
                    Map<String, String> s = SenderIt.settings(prefix, prefix + "-senders", provider.apiUrl(), BOTS);
                    s.put("sender.instance.id", prefix + "-" + i);
                    s.put("redis.url", redisUrl);
                    s.put("budget.global.rate.per.s", BUDGET_PER_S);
                    s.put("budget.global.burst", "1");
                    s.put("budget.chat.rate.per.s", "100");
                    s.put("budget.chat.burst", "10");
                    SenderService sender = SenderIt.sender(s);
                    senders.add(sender);
                    sender.start();
                }
                long start = System.currentTimeMillis();
                SenderIt.produce(prefix + ".outbox.live", messages);
                // mid-run: once a third of the busy bot's messages reached the provider
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                        .until(() -> provider.accepted().size() >= messages.size() / 3);
                midRun.accept(this);
                Map<String, DeliveryResult> byId = results.awaitResults(messages.size(), Duration.ofSeconds(120));

                // nothing lost, nothing twice: one result per id, all DELIVERED, one acceptance per id
                assertThat(byId).hasSize(messages.size());
                assertThat(results.all).hasSize(messages.size());
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                List<FakeTelegramAccepted> accepted = provider.accepted();
                assertThat(accepted).hasSize(messages.size());
                Map<String, List<Integer>> perChat = new LinkedHashMap<>();
                for (FakeTelegramAccepted a : accepted) {
                    perChat.computeIfAbsent(a.botId() + "|" + a.chatId(), c -> new ArrayList<>())
                            .add(Integer.parseInt(a.text().substring(a.text().lastIndexOf('#') + 1)));
                }
                perChat.forEach((chat, seqs) -> assertThat(seqs).as("order in %s", chat).isSorted());

                Map<String, Integer> perBot = new HashMap<>();
                accepted.forEach(a -> perBot.merge(a.botId(), 1, Integer::sum));
                int maxPerS = provider.maxBotMessagesPer(Duration.ofSeconds(1));
                long elapsed = System.currentTimeMillis() - start;
                System.out.printf("RedisFailoverSendersIT %s: %d messages %s in %d ms, 0 lost, 0 twice; max %d calls in "
                                + "any 1 s at the provider (limit %d, budget %s/s); %d x 429%n", prefix, accepted.size(),
                        perBot, elapsed, maxPerS, PROVIDER_PER_S, BUDGET_PER_S, provider.rejected429Count());
                assertThat(maxPerS).as("calls in any sliding second, failover included").isLessThanOrEqualTo(PROVIDER_PER_S);
            } finally {
                senders.forEach(SenderService::close);
            }
        }
    }
}
