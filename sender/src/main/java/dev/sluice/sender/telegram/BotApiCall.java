package dev.sluice.sender.telegram;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.pengrad.telegrambot.request.BaseRequest;
import com.pengrad.telegrambot.response.BaseResponse;
import com.pengrad.telegrambot.response.SendResponse;
import com.pengrad.telegrambot.utility.BotUtils;
import java.io.IOException;
import java.util.Map;
import okhttp3.FormBody;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * One Bot API call of a pengrad request that carries no file (issue 19: the sender's hot path): the same POST pengrad's
 * {@code TelegramBotClient} makes (URL {@code <api url><token>/<method>}, a form body of the request's parameters, each
 * a Java value as its string and any other value as pengrad's JSON), but the answer is read with a streaming parser
 * for the fields the sender classifies by ({@link Reply}) instead of binding the whole message with Gson's reflection.
 * Requests with a file (multipart) stay with pengrad.
 *
 * <p>Thread: stateless apart from the shared OkHttp client (thread-safe); called by every sending thread at once.
 */
final class BotApiCall {
    private static final JsonFactory JSON = new JsonFactory();

    private final OkHttpClient http;

    BotApiCall(OkHttpClient http) {
        this.http = http;
    }

    /**
     * What the sender reads of a Bot API answer.
     *
     * @param messageId {@code result.message_id} when the result is a message, else null
     */
    record Reply(boolean ok, int errorCode, String description, Integer retryAfter, Long migrateToChatId,
                 Integer messageId) {
        /** The same fields of an answer pengrad read (a call pengrad made itself); null stays null. */
        static Reply of(BaseResponse r) {
            if (r == null) {
                return null;
            }
            Integer id = r instanceof SendResponse s && s.message() != null ? s.message().messageId() : null;
            return new Reply(r.isOk(), r.errorCode(), r.description(),
                    r.parameters() == null ? null : r.parameters().retryAfter(),
                    r.parameters() == null ? null : r.parameters().migrateToChatId(), id);
        }
    }

    /**
     * Calls {@code request} ({@link BaseRequest#isMultipart()} false) for the bot whose base URL is {@code botUrl}
     * ({@code <api url><token>/}).
     *
     * @return the answer, or null when its body is empty
     * @throws IOException on a connection or timeout error, or an answer that is not the Bot API's JSON
     */
    Reply call(String botUrl, BaseRequest<?, ?> request) throws IOException {
        return call(botUrl, request.getMethod(), request.getParameters());
    }

    /**
     * Calls Bot API method {@code method} with {@code params} as pengrad would send them (in their order, each value as
     * {@link #paramValue}), e.g. {@link TelegramRequests#sendMessageParams}.
     */
    Reply call(String botUrl, String method, Map<String, Object> params) throws IOException {
        FormBody.Builder form = new FormBody.Builder();
        for (Map.Entry<String, Object> p : params.entrySet()) {
            form.add(p.getKey(), paramValue(p.getValue()));
        }
        Request http = new Request.Builder().url(botUrl + method).post(form.build()).build();
        try (Response response = this.http.newCall(http).execute()) {
            ResponseBody body = response.body();
            return body == null ? null : parse(body.bytes());
        }
    }

    /** As pengrad writes a parameter: primitives, enums and java.lang values as their string, others as its JSON. */
    static String paramValue(Object value) {
        Class<?> type = value.getClass();
        if (type.isPrimitive() || type.isEnum() || type.getName().startsWith("java.lang")) {
            return String.valueOf(value);
        }
        return BotUtils.GSON.toJson(value);
    }

    /** Reads {@code ok}, {@code error_code}, {@code description}, {@code parameters} and {@code result.message_id}. */
    static Reply parse(byte[] body) throws IOException {
        try (JsonParser p = JSON.createParser(body)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                return null; // an empty answer: as pengrad, no response
            }
            if (first != JsonToken.START_OBJECT) {
                throw new IOException("answer of the Bot API is not a JSON object");
            }
            boolean ok = false;
            int errorCode = 0;
            String description = null;
            Integer retryAfter = null;
            Long migrateTo = null;
            Integer messageId = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "ok" -> ok = value == JsonToken.VALUE_TRUE;
                    case "error_code" -> errorCode = value == JsonToken.VALUE_NUMBER_INT ? p.getIntValue() : 0;
                    case "description" -> description = value == JsonToken.VALUE_NULL ? null : p.getValueAsString();
                    case "parameters" -> {
                        if (value == JsonToken.START_OBJECT) {
                            while (p.nextToken() == JsonToken.FIELD_NAME) {
                                String name = p.currentName();
                                JsonToken v = p.nextToken();
                                if (name.equals("retry_after") && v == JsonToken.VALUE_NUMBER_INT) {
                                    retryAfter = p.getIntValue();
                                } else if (name.equals("migrate_to_chat_id") && v == JsonToken.VALUE_NUMBER_INT) {
                                    migrateTo = p.getLongValue();
                                } else {
                                    p.skipChildren();
                                }
                            }
                        } else {
                            p.skipChildren();
                        }
                    }
                    case "result" -> {
                        if (value == JsonToken.START_OBJECT) {
                            while (p.nextToken() == JsonToken.FIELD_NAME) {
                                String name = p.currentName();
                                JsonToken v = p.nextToken();
                                if (name.equals("message_id") && v == JsonToken.VALUE_NUMBER_INT) {
                                    messageId = p.getIntValue();
                                } else {
                                    p.skipChildren();
                                }
                            }
                        } else {
                            p.skipChildren();
                        }
                    }
                    default -> p.skipChildren();
                }
            }
            return new Reply(ok, errorCode, description, retryAfter, migrateTo, messageId);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException("answer of the Bot API is not JSON: " + e.getOriginalMessage(), e);
        }
    }
}
