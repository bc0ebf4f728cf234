package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.MockHttpProvider;
import dev.sluice.testkit.MockHttpProvider.Answer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 8's second "done when", through the real pipeline sender (embedded broker, redis-server): a provider
 * configured under {@code provider.<id>.*} is sent to for messages whose {@code bot_id} is that id; while it
 * answers 200 with a captcha page (failing the response check) nothing is written as DELIVERED, and once it
 * answers properly each message is delivered exactly once, after the provider really accepted it.
 */
class HttpProviderSenderIT {
    private static final String PROVIDER = "smsapi";
    private static final String API_KEY = "key-" + "sender-it";

    @Test
    void a_200_failing_the_response_check_is_retried_later_and_never_written_as_delivered() {
        String prefix = "http-soft";
        SenderIt.topics(prefix, 2);
        try (MockHttpProvider mock = MockHttpProvider.start()) {
            mock.softLimit(true);
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", mock.url() + "/bot",
                    Map.of(PROVIDER, API_KEY));
            String p = "provider." + PROVIDER + ".";
            s.put(p + "url.template", mock.url() + "/v1/messages");
            s.put(p + "header.X-Api-Key", "{token}");
            s.put(p + "body.template", "{\"to\":\"{chat}\",\"text\":\"{text}\"}");
            s.put(p + "limit.key", "ext:sms-api:sender-it-" + System.nanoTime());
            s.put(p + "rate.per.s", "5");
            s.put(p + "backoff.base.ms", "100");
            s.put(p + "backoff.max.ms", "400");
            s.put(p + "response.expected.status", "200");
            s.put(p + "response.content.type", "application/json");
            s.put(p + "response.json.pointer", "/id");
            s.put("sender.retry.after.jitter.ms", "50");

            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                msgs.add(SenderIt.message("s" + i, PROVIDER, "+1555010" + i).build());
            }
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);

                await().atMost(Duration.ofSeconds(20)).until(() -> mock.count(Answer.SOFT_LIMIT) >= 4);
                // the soft-limited answers are throttle signals: no result at all while they last
                await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> {
                    results.poll(Duration.ofMillis(100));
                    return results.all.isEmpty();
                });
                long softLimited = mock.count(Answer.SOFT_LIMIT);

                mock.softLimit(false);
                Map<String, DeliveryResult> byId = results.awaitResults(msgs.size(), Duration.ofSeconds(25));
                System.out.printf("soft limit: %d captcha answers, then %d accepted; attempts %s%n", softLimited,
                        mock.accepted().size(), byId.values().stream().map(DeliveryResult::getAttempts).toList());

                assertThat(results.all).as("one result per message").hasSize(msgs.size());
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(mock.accepted()).as("each accepted once by the provider").hasSize(msgs.size());
                for (DeliveryResult r : byId.values()) {
                    MockHttpProvider.Request accepted = mock.accepted().stream()
                            .filter(a -> a.body().contains("msg " + r.getMessageId() + "\"")).findFirst().orElseThrow();
                    assertThat(r.getResultAt().toEpochMilli()).as("DELIVERED only after the provider accepted it")
                            .isGreaterThanOrEqualTo(accepted.atMillis());
                    assertThat(r.getProviderMessageId()).as("the id from response.json.pointer").isPositive();
                }
                assertThat(byId.values()).as("some were refused by the soft limit first")
                        .anyMatch(r -> r.getAttempts() >= 2);
                assertThat(mock.requests()).extracting(MockHttpProvider.Request::keyId)
                        .containsOnly(MockHttpProvider.keyId(API_KEY));
            }
        }
    }
}
