package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.pengrad.telegrambot.TelegramBot;
import com.pengrad.telegrambot.model.Chat;
import com.pengrad.telegrambot.request.SendMessage;
import com.pengrad.telegrambot.response.SendResponse;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FakeTelegramIT {

    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456");
    private static final String BOT_ID = "123456";
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();
    private FakeTelegram fake;
    private TelegramBot bot;

    @AfterEach
    void tearDown() {
        if (bot != null) {
            bot.shutdown();
        }
        if (fake != null) {
            fake.close();
        }
    }

    private TelegramBot pengrad(FakeTelegram f) {
        bot = new TelegramBot.Builder(TOKEN).apiUrl(f.apiUrl()).build();
        return bot;
    }

    @Test
    void listensOnLoopbackByDefaultAndOnEveryInterfaceWhenAskedTo() throws Exception {
        java.net.InetAddress external = java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces()).stream()
                .flatMap(i -> java.util.Collections.list(i.getInetAddresses()).stream())
                .filter(a -> a instanceof java.net.Inet4Address && !a.isLoopbackAddress()).findFirst().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(external != null, "this host has no non-loopback IPv4 address");
        try (FakeTelegram loopback = FakeTelegram.start()) {
            assertThat(reachable(external, loopback.port())).isFalse();
        }
        fake = FakeTelegram.builder().bindAddress(java.net.InetAddress.getByName("0.0.0.0")).start();
        assertThat(reachable(external, fake.port())).isTrue();
        assertThat(pengrad(fake).execute(new SendMessage(4242L, "via 127.0.0.1")).isOk()).isTrue();
    }

    private static boolean reachable(java.net.InetAddress address, int port) {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress(address, port), 500);
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    @Test
    void pengradParsesAnAcceptedSend() {
        fake = FakeTelegram.start();
        SendResponse response = pengrad(fake).execute(new SendMessage(4242L, "hello, Kamchatka"));
        assertThat(response.isOk()).isTrue();
        assertThat(response.message().messageId()).isEqualTo(1);
        assertThat(response.message().chat().id()).isEqualTo(4242L);
        assertThat(response.message().chat().type()).isEqualTo(Chat.Type.Private);
        assertThat(response.message().text()).isEqualTo("hello, Kamchatka");
        assertThat(response.message().date()).isPositive();

        SendResponse group = bot.execute(new SendMessage(-100777L, "to the group"));
        assertThat(group.message().chat().type()).isEqualTo(Chat.Type.supergroup);
        assertThat(bot.execute(new SendMessage(4242L, "second")).message().messageId()).isEqualTo(2);

        assertThat(fake.accepted()).extracting(FakeTelegramAccepted::chatId).containsExactly("4242", "-100777", "4242");
        assertThat(fake.acceptedFor("4242")).extracting(FakeTelegramAccepted::text).containsExactly("hello, Kamchatka", "second");
        assertThat(fake.accepted().get(0).botId()).isEqualTo(BOT_ID);
    }

    @Test
    void overTheChatLimitPengradSees429WithRetryAfterAndTheCallDuringThePenaltyExtendsIt() {
        fake = FakeTelegram.start(FakeTelegramLimits.telegram().withChatBurst(1));
        TelegramBot b = pengrad(fake);
        assertThat(b.execute(new SendMessage(7L, "one")).isOk()).isTrue();
        SendResponse refused = b.execute(new SendMessage(7L, "two"));
        assertThat(refused.isOk()).isFalse();
        assertThat(refused.errorCode()).isEqualTo(429);
        assertThat(refused.description()).isEqualTo("Too Many Requests: retry after 1");
        assertThat(refused.parameters().retryAfter()).isEqualTo(1);
        assertThat(b.execute(new SendMessage(8L, "other chat")).isOk()).as("no head-of-line effect on others").isTrue();
        assertThat(fake.rejected429Count()).isEqualTo(1);
        assertThat(fake.rejected429Count(BOT_ID)).isEqualTo(1);
        assertThat(fake.rejected429ByScope()).as("the chat's limit refused it").isEqualTo(Map.of(TelegramLimiter.Scope.CHAT, 1L));
        assertThat(fake.acceptedFor("7")).hasSize(1);
    }

    @Test
    void forced429ForAChatHasTheGivenRetryAfterAndGrowsWhenCalledDuringIt() {
        fake = FakeTelegram.start();
        fake.enqueueForChat("42", TelegramBehaviour.tooManyRequests(Duration.ofSeconds(3)));
        TelegramBot b = pengrad(fake);
        SendResponse first = b.execute(new SendMessage(42L, "a"));
        assertThat(first.errorCode()).isEqualTo(429);
        assertThat(first.parameters().retryAfter()).isEqualTo(3);
        SendResponse again = b.execute(new SendMessage(42L, "a"));
        assertThat(again.errorCode()).as("still under penalty").isEqualTo(429);
        assertThat(again.parameters().retryAfter()).isEqualTo(3);
        assertThat(b.execute(new SendMessage(43L, "b")).isOk()).isTrue();
        assertThat(fake.acceptedFor("42")).isEmpty();
    }

    @Test
    void forced429ForTheBotStopsEveryChatOfThatBot() {
        fake = FakeTelegram.start();
        fake.enqueueForBot(BOT_ID, TelegramBehaviour.tooManyRequests(Duration.ofSeconds(5)), 1);
        TelegramBot b = pengrad(fake);
        assertThat(b.execute(new SendMessage(1L, "x")).parameters().retryAfter()).isEqualTo(5);
        assertThat(b.execute(new SendMessage(2L, "y")).errorCode()).isEqualTo(429);
        assertThat(fake.rejected429Count(BOT_ID)).isEqualTo(2);
        assertThat(fake.rejected429Count(TOKEN)).as("a whole token counts as its bot id").isEqualTo(2);
        assertThat(fake.rejected429ByScope()).as("both met the bot's penalty").isEqualTo(Map.of(TelegramLimiter.Scope.BOT, 2L));
    }

    @Test
    void blockedAndDeactivatedChatsGet403() {
        fake = FakeTelegram.start();
        fake.blockChat("55");
        fake.deactivateChat("56");
        TelegramBot b = pengrad(fake);
        SendResponse blocked = b.execute(new SendMessage(55L, "hi"));
        assertThat(blocked.errorCode()).isEqualTo(403);
        assertThat(blocked.description()).isEqualTo("Forbidden: bot was blocked by the user");
        assertThat(b.execute(new SendMessage(56L, "hi")).description()).isEqualTo("Forbidden: user is deactivated");
        fake.unblockChat("55");
        assertThat(b.execute(new SendMessage(55L, "hi again")).isOk()).isTrue();
        assertThat(fake.responseCount(403)).isEqualTo(2);
    }

    @Test
    void serverErrorsAndMigrationForAChat() {
        fake = FakeTelegram.start();
        fake.enqueueForChat(BOT_ID, "9", TelegramBehaviour.serverError(502), 1);
        fake.enqueueForChat("-555", TelegramBehaviour.migrateTo(-100555L));
        TelegramBot b = pengrad(fake);
        SendResponse bad = b.execute(new SendMessage(9L, "A"));
        assertThat(bad.isOk()).isFalse();
        assertThat(bad.errorCode()).isEqualTo(502);
        assertThat(b.execute(new SendMessage(9L, "A")).isOk()).as("one-shot").isTrue();
        SendResponse migrated = b.execute(new SendMessage(-555L, "hi"));
        assertThat(migrated.errorCode()).isEqualTo(400);
        assertThat(migrated.parameters().migrateToChatId()).isEqualTo(-100555L);
        // every request is logged with its answer, accepted or not
        assertThat(fake.calls()).extracting(FakeTelegramCall::chatId, FakeTelegramCall::text, FakeTelegramCall::status)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("9", "A", 502),
                        org.assertj.core.groups.Tuple.tuple("9", "A", 200),
                        org.assertj.core.groups.Tuple.tuple("-555", "hi", 400));
        assertThat(fake.callsFor("9")).hasSize(2).allMatch(c -> c.botId().equals(BOT_ID));
    }

    @Test
    void acceptThenStallRecordsTheMessageButTheClientTimesOut() {
        fake = FakeTelegram.start();
        fake.enqueueForChat("77", TelegramBehaviour.acceptThenStall(Duration.ofSeconds(10)));
        OkHttpClient shortTimeout = new OkHttpClient.Builder().readTimeout(300, TimeUnit.MILLISECONDS)
                .retryOnConnectionFailure(false).build();
        bot = new TelegramBot.Builder(TOKEN).apiUrl(fake.apiUrl()).okHttpClient(shortTimeout).build();
        assertThatThrownBy(() -> bot.execute(new SendMessage(77L, "did it arrive?"))).isInstanceOf(RuntimeException.class);
        assertThat(fake.acceptedFor("77")).extracting(FakeTelegramAccepted::text).containsExactly("did it arrive?");
    }

    @Test
    void dropConnectionAnswersNothingAndAcceptsNothing() {
        fake = FakeTelegram.start();
        fake.enqueueForChat("78", TelegramBehaviour.dropConnection());
        assertThatThrownBy(() -> post("/bot" + TOKEN + "/sendMessage", "application/json", "{\"chat_id\":78,\"text\":\"x\"}"))
                .isInstanceOf(java.io.IOException.class);
        assertThat(fake.acceptedFor("78")).isEmpty();
        assertThat(fake.callsFor("78")).singleElement().satisfies(c -> assertThat(c.status()).isZero());
    }

    @Test
    void acceptThenDropAcceptsAndAnswersNothing() {
        fake = FakeTelegram.start();
        fake.enqueueForChat("79", TelegramBehaviour.acceptThenDrop());
        assertThatThrownBy(() -> post("/bot" + TOKEN + "/sendMessage", "application/json", "{\"chat_id\":79,\"text\":\"lost answer\"}"))
                .isInstanceOf(java.io.IOException.class);
        assertThat(fake.acceptedFor("79")).extracting(FakeTelegramAccepted::text).containsExactly("lost answer");
        assertThat(fake.callsFor("79")).singleElement().satisfies(c -> assertThat(c.status()).isZero());
    }

    @Test
    void jsonFormMultipartAndQueryBodiesAreAccepted() throws Exception {
        fake = FakeTelegram.start(FakeTelegramLimits.unlimited());
        HttpResponse<String> json = post("/bot" + TOKEN + "/sendMessage", "application/json",
                "{\"chat_id\":\"-555\",\"text\":\"json \\u00e9\"}");
        assertThat(json.statusCode()).isEqualTo(200);
        JsonNode body = JSON.readTree(json.body());
        assertThat(body.path("ok").asBoolean()).isTrue();
        assertThat(body.path("result").path("chat").path("id").asLong()).isEqualTo(-555L);
        assertThat(body.path("result").path("chat").path("type").asText()).isEqualTo("group");

        assertThat(post("/bot" + TOKEN + "/sendMessage", "application/x-www-form-urlencoded; charset=utf-8",
                "chat_id=5&text=form+%C3%A9%26co").statusCode()).isEqualTo(200);
        String boundary = "XyZ";
        String multipart = "--XyZ\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n6\r\n"
                + "--XyZ\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nmulti\r\npart\r\n--XyZ--\r\n";
        assertThat(post("/bot" + TOKEN + "/sendMessage", "multipart/form-data; boundary=" + boundary, multipart)
                .statusCode()).isEqualTo(200);
        assertThat(post("/bot" + TOKEN + "/sendMessage?chat_id=@sluice_news&text=query", null, "").statusCode())
                .isEqualTo(200);

        assertThat(fake.accepted()).extracting(FakeTelegramAccepted::text)
                .containsExactly("json é", "form é&co", "multi\r\npart", "query");
        assertThat(fake.acceptedFor("@sluice_news")).hasSize(1);
    }

    @Test
    void badRequestsAnswerLikeTelegram() throws Exception {
        fake = FakeTelegram.start();
        assertError(post("/bot" + TOKEN + "/sendMessage", "application/json", "{\"text\":\"x\"}"),
                400, "Bad Request: chat_id is empty");
        assertError(post("/bot" + TOKEN + "/sendMessage", "application/json", "{\"chat_id\":\"nobody\",\"text\":\"x\"}"),
                400, "Bad Request: chat not found");
        assertError(post("/bot" + TOKEN + "/sendMessage", "application/json", "{\"chat_id\":1}"),
                400, "Bad Request: message text is empty");
        assertError(post("/bot" + TOKEN + "/sendMessage", "application/json",
                "{\"chat_id\":1,\"text\":\"" + "x".repeat(4097) + "\"}"), 400, "Bad Request: message is too long");
        assertThat(post("/bot" + TOKEN + "/sendMessage", "application/json",
                "{\"chat_id\":1,\"text\":\"" + "x".repeat(4096) + "\"}").statusCode()).isEqualTo(200);
        assertError(post("/botnot-a-token/sendMessage", "application/json", "{}"), 404, "Not Found");
        assertError(post("/bot" + TOKEN + "/launchRocket", "application/json", "{}"), 404, "Not Found: method not found");
        assertThat(fake.requestCount()).isEqualTo(7);
        assertThat(fake.accepted()).hasSize(1);
    }

    @Test
    void unknownTokensGet401WhenTokensAreRequired() throws Exception {
        fake = FakeTelegram.builder().requireToken(TOKEN).start();
        assertError(post("/bot999:wrongsecret/sendMessage", "application/json", "{\"chat_id\":1,\"text\":\"x\"}"),
                401, "Unauthorized");
        assertThat(post("/bot" + TOKEN + "/sendMessage", "application/json", "{\"chat_id\":1,\"text\":\"x\"}")
                .statusCode()).isEqualTo(200);
        assertThat(pengrad(fake).execute(new com.pengrad.telegrambot.request.GetMe()).user().id()).isEqualTo(123456L);
    }

    @Test
    void theTokenNeverAppearsInRecordsOrToString() {
        fake = FakeTelegram.start();
        pengrad(fake).execute(new SendMessage(1L, "x"));
        String secret = TOKEN.substring(TOKEN.indexOf(':') + 1);
        assertThat(fake.accepted()).hasSize(1);
        assertThat(fake.accepted().toString()).doesNotContain(secret).doesNotContain(TOKEN);
        assertThat(fake.toString()).doesNotContain(secret);
        assertThat(fake.accepted().get(0).botId()).isEqualTo(FakeTelegram.botIdOf(TOKEN));
    }

    @Test
    void windowStatisticsOverAcceptedMessages() {
        fake = FakeTelegram.start(FakeTelegramLimits.unlimited());
        TelegramBot b = pengrad(fake);
        for (int i = 0; i < 5; i++) {
            b.execute(new SendMessage(-100L, "g" + i));
            b.execute(new SendMessage(10L + i, "p" + i));
        }
        assertThat(fake.maxBotMessagesPer(Duration.ofSeconds(60))).isEqualTo(10);
        assertThat(fake.maxGroupMessagesPer(Duration.ofSeconds(60))).isEqualTo(5);
        assertThat(fake.maxChatMessagesPer(Duration.ofSeconds(60))).isEqualTo(5);
        assertThat(FakeTelegram.maxPerSlidingWindow(List.of(0L, 1L, 2000L), 1000)).isEqualTo(2);
        fake.reset();
        assertThat(fake.accepted()).isEmpty();
        assertThat(fake.requestCount()).isZero();
    }

    @Test
    void concurrentSendersNeverGetMoreThanTheGlobalLimitAccepted() throws Exception {
        fake = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(20));
        TelegramBot b = pengrad(fake);
        int threads = 6;
        long until = System.nanoTime() + Duration.ofMillis(1500).toNanos();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        java.util.concurrent.atomic.AtomicInteger chat = new java.util.concurrent.atomic.AtomicInteger(1000);
        List<java.util.concurrent.Future<?>> futures = new java.util.ArrayList<>();
        for (int t = 0; t < threads; t++) {
            futures.add(pool.submit(() -> {
                while (System.nanoTime() < until) {
                    b.execute(new SendMessage((long) chat.incrementAndGet(), "flood"));
                }
            }));
        }
        for (java.util.concurrent.Future<?> f : futures) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(fake.rejected429Count()).as("the flood was refused").isPositive();
        assertThat(fake.rejected429ByScope().keySet()).as("new chats each call: only the bot's second refuses")
                .containsExactly(TelegramLimiter.Scope.BOT);
        assertThat(fake.accepted()).hasSizeGreaterThanOrEqualTo(20);
        assertThat(fake.maxBotMessagesPer(Duration.ofSeconds(1))).isLessThanOrEqualTo(20);
        assertThat(fake.requestCount()).isEqualTo(fake.accepted().size() + fake.rejected429Count());
    }

    @Test
    void anInjectedClockDrivesTheLimitsWithoutSleeping() {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_700_000_000_000L);
        java.time.Clock clock = new java.time.Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return java.time.ZoneOffset.UTC;
            }

            @Override
            public java.time.Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public java.time.Instant instant() {
                return java.time.Instant.ofEpochMilli(now.get());
            }
        };
        fake = FakeTelegram.builder().clock(clock).start();
        TelegramBot b = pengrad(fake);
        for (int i = 0; i < 20; i++) {
            assertThat(b.execute(new SendMessage(-42L, "m" + i)).isOk()).isTrue();
            now.addAndGet(1000);
        }
        SendResponse refused = b.execute(new SendMessage(-42L, "m20"));
        assertThat(refused.errorCode()).isEqualTo(429);
        assertThat(refused.parameters().retryAfter()).isEqualTo(40); // first send left the 60 s window at +60 s
        now.addAndGet(40_000);
        assertThat(b.execute(new SendMessage(-42L, "m20")).isOk()).isTrue();
        assertThat(fake.accepted().get(20).acceptedAtMillis()).isEqualTo(now.get());
        assertThat(fake.maxGroupMessagesPer(Duration.ofSeconds(60))).isEqualTo(20);
    }

    private HttpResponse<String> post(String path, String contentType, String body) throws Exception {
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(fake.url() + path))
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            req.header("Content-Type", contentType);
        }
        return http.send(req.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertError(HttpResponse<String> response, int status, String description) throws Exception {
        assertThat(response.statusCode()).isEqualTo(status);
        JsonNode body = JSON.readTree(response.body());
        assertThat(body.path("ok").asBoolean(true)).isFalse();
        assertThat(body.path("error_code").asInt()).isEqualTo(status);
        assertThat(body.path("description").asText()).isEqualTo(description);
    }
}
