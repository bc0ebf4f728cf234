package dev.sluice.sender.telegram;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.pengrad.telegrambot.TelegramBot;
import com.pengrad.telegrambot.model.request.InlineKeyboardButton;
import com.pengrad.telegrambot.model.request.InlineKeyboardMarkup;
import com.pengrad.telegrambot.model.request.ParseMode;
import com.pengrad.telegrambot.request.BaseRequest;
import com.pengrad.telegrambot.request.DeleteMessage;
import com.pengrad.telegrambot.request.EditMessageText;
import com.pengrad.telegrambot.request.SendMessage;
import com.pengrad.telegrambot.request.SendPhoto;
import com.pengrad.telegrambot.response.BaseResponse;
import com.pengrad.telegrambot.response.SendResponse;
import com.pengrad.telegrambot.utility.BotUtils;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 19: the sender's own Bot API call must be what pengrad sends (same path, content type and body bytes) and read
 * the same fields of an answer as pengrad's Gson binding did. Both are sent to one real local server and compared.
 */
class BotApiCallTest {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private HttpServer server;
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private volatile String answer = "{\"ok\":true,\"result\":{\"message_id\":5,\"date\":1,\"chat\":{\"id\":1,\"type\":\"private\"}}}";
    private OkHttpClient http;
    private String apiUrl;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            seen.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath() + " "
                    + exchange.getRequestHeaders().getFirst("Content-Type") + " " + body);
            byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
        http = new OkHttpClient();
        apiUrl = "http://127.0.0.1:" + server.getAddress().getPort() + "/bot";
    }

    @AfterEach
    void stop() {
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
        server.stop(0);
    }

    private void sameAsPengrad(BaseRequest<?, ?> request) throws IOException {
        TelegramBot bot = new TelegramBot.Builder(TOKEN).apiUrl(apiUrl).okHttpClient(http).build();
        seen.clear();
        bot.execute(request);
        new BotApiCall(http).call(apiUrl + TOKEN + "/", request);
        assertThat(seen).hasSize(2);
        assertThat(seen.get(1)).isEqualTo(seen.get(0));
    }

    @Test
    void every_request_without_a_file_is_sent_exactly_as_pengrad_sends_it() throws IOException {
        InlineKeyboardMarkup keyboard = new InlineKeyboardMarkup(new InlineKeyboardButton("Open").url("https://x.example/1"),
                new InlineKeyboardButton("Snooze \"10\" min").callbackData("snooze:42:600"));
        sameAsPengrad(new SendMessage("-1001234", "Meeting at 10:00 & more = ü ✓\nline two").parseMode(ParseMode.HTML)
                .disableNotification(true).protectContent(true).messageThreadId(7).replyMarkup(keyboard));
        assertThat(seen.get(0)).startsWith("POST /bot" + TOKEN + "/sendMessage application/x-www-form-urlencoded");
        sameAsPengrad(new SendMessage("42", "hi"));
        sameAsPengrad(new EditMessageText("42", 9, "edited").parseMode(ParseMode.MarkdownV2));
        sameAsPengrad(new DeleteMessage("42", 9));
        sameAsPengrad(new SendPhoto("42", "https://x.example/p.jpg").caption("cap"));
    }

    private static dev.sluice.avro.OutboundMessage.Builder outbound(String chat, String text) {
        return dev.sluice.avro.OutboundMessage.newBuilder().setId("m-1").setBotId("alerts").setChatId(chat)
                .setKind("meeting.reminder").setEventClass(dev.sluice.avro.NotificationClass.CRITICAL)
                .setLane(dev.sluice.avro.Lane.LIVE).setText(text).setCreatedAt(java.time.Instant.EPOCH)
                .setDueAt(java.time.Instant.EPOCH);
    }

    /**
     * Issue 19: a plain sendMessage is sent without building pengrad's request (whose constructor compiles a regex per
     * parameter): its parameters are the same keys, in the same order, with the same values as the request
     * {@link TelegramRequests#request} builds (with {@code allow_paid_broadcast} added as the transport adds it), and
     * the POST is byte for byte pengrad's.
     */
    @Test
    void a_plain_send_message_without_pengrads_request_is_the_same_post() throws IOException {
        dev.sluice.avro.InlineKeyboard buttons = dev.sluice.avro.InlineKeyboard.newBuilder().setRows(List.of(List.of(
                dev.sluice.avro.InlineButton.newBuilder().setText("Open \"task\"").setUrl("https://x.example/42?a=1&b=2").build(),
                dev.sluice.avro.InlineButton.newBuilder().setText("Snooze").setCallbackData("snooze:42:600").build()))).build();
        List<dev.sluice.avro.OutboundMessage> messages = List.of(
                outbound("42", "hi").build(),
                outbound(" @Chan ", "Meeting at 10:00 & more = ü ✓\nline two").setParseMode("HTML").build(),
                outbound("-1001234", "*x*").setParseMode("MarkdownV2").setLinkPreviewDisabled(true).build(),
                outbound("-1001234", "silent").setDisableNotification(true).setProtectContent(true)
                        .setMessageThreadId(7L).build(),
                outbound("42", "keys").setReplyMarkup(buttons).setParseMode("Markdown").setLinkPreviewDisabled(true)
                        .setDisableNotification(true).setProtectContent(true).setMessageThreadId(99L).build());
        for (dev.sluice.avro.OutboundMessage m : messages) {
            for (boolean paid : new boolean[] {false, true}) {
                ParseMode mode = m.getParseMode() == null ? null : ParseMode.valueOf(m.getParseMode());
                BaseRequest<?, ?> viaPengrad = TelegramRequests.request(m, m.getChatId(), mode, 0);
                if (paid) {
                    ((com.pengrad.telegrambot.request.AbstractSendRequest<?>) viaPengrad).allowPaidBroadcast(true);
                }
                java.util.Map<String, Object> params = TelegramRequests.sendMessageParams(m, m.getChatId(), mode, paid);
                assertThat(params).as("%s, paid %s", m.getText(), paid).isNotNull();
                assertThat(strings(params)).isEqualTo(strings(viaPengrad.getParameters()));
                TelegramBot bot = new TelegramBot.Builder(TOKEN).apiUrl(apiUrl).okHttpClient(http).build();
                seen.clear();
                bot.execute(viaPengrad);
                new BotApiCall(http).call(apiUrl + TOKEN + "/", "sendMessage", params);
                assertThat(seen).hasSize(2);
                assertThat(seen.get(1)).isEqualTo(seen.get(0));
            }
        }
        dev.sluice.avro.OutboundMessage edit = outbound("42", "e").setEditOf("m-0").build();
        assertThat(TelegramRequests.sendMessageParams(edit, "42", null, false)).as("not a plain send").isNull();
        dev.sluice.avro.OutboundMessage photo = outbound("42", "c").setMedia(dev.sluice.avro.Media.newBuilder()
                .setType(dev.sluice.avro.MediaType.PHOTO).setUrl("https://x.example/p.jpg").build()).build();
        assertThat(TelegramRequests.sendMessageParams(photo, "42", null, false)).as("a media send").isNull();
    }

    private static List<String> strings(java.util.Map<String, Object> params) {
        return params.entrySet().stream().map(e -> e.getKey() + "=" + BotApiCall.paramValue(e.getValue())).toList();
    }

    private static void readsAsPengrad(String body) throws IOException {
        readsAsPengrad(body, SendResponse.class);
    }

    /** @param type the request's response type (a delete answers {@code true}: BaseResponse) */
    private static void readsAsPengrad(String body, Class<? extends BaseResponse> type) throws IOException {
        BaseResponse viaGson = BotUtils.GSON.fromJson(body, type);
        assertThat(BotApiCall.parse(body.getBytes(StandardCharsets.UTF_8))).isEqualTo(BotApiCall.Reply.of(viaGson));
    }

    @Test
    void an_answer_reads_as_pengrad_read_it() throws IOException {
        readsAsPengrad("{\"ok\":true,\"result\":{\"message_id\":777,\"from\":{\"id\":1,\"is_bot\":true,\"first_name\":\"b\"},"
                + "\"date\":1,\"chat\":{\"id\":42,\"type\":\"private\"},\"text\":\"hi\",\"entities\":[{\"type\":\"url\","
                + "\"offset\":0,\"length\":2}],\"reply_markup\":{\"inline_keyboard\":[[{\"text\":\"a\",\"url\":\"u\"}]]}}}");
        readsAsPengrad("{\"ok\":true,\"result\":true}", BaseResponse.class);
        readsAsPengrad("{\"ok\":false,\"error_code\":429,\"description\":\"Too Many Requests: retry after 32\","
                + "\"parameters\":{\"retry_after\":32}}");
        readsAsPengrad("{\"ok\":false,\"error_code\":400,\"description\":\"Bad Request: group chat was upgraded\","
                + "\"parameters\":{\"migrate_to_chat_id\":-1001234567890}}");
        readsAsPengrad("{\"description\":\"Forbidden: bot was blocked by the user\",\"error_code\":403,\"ok\":false}");
        readsAsPengrad("{\"ok\":false,\"error_code\":400,\"description\":null,\"parameters\":{}}");
        assertThat(BotApiCall.parse(new byte[0])).isNull();
        assertThat(BotUtils.GSON.fromJson("", BaseResponse.class)).isNull();
    }

    @Test
    void an_answer_that_is_not_json_is_an_io_error() {
        assertThatThrownBy(() -> BotApiCall.parse("<html>502</html>".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IOException.class);
        assertThatThrownBy(() -> BotApiCall.parse("{\"ok\":tru".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IOException.class);
    }

    @Test
    void the_answer_of_a_real_call_is_read() throws IOException {
        answer = "{\"ok\":true,\"result\":{\"message_id\":31,\"date\":1,\"chat\":{\"id\":1,\"type\":\"private\"}}}";
        assertThat(new BotApiCall(http).call(apiUrl + TOKEN + "/", new SendMessage("1", "x")).messageId()).isEqualTo(31);
    }
}
