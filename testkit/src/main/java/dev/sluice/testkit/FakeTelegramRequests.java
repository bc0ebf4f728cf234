package dev.sluice.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a {@link FakeTelegram} reads a Bot API request's parameters, as Telegram accepts them: query parameters and a body
 * as {@code application/json}, {@code application/x-www-form-urlencoded} (what pengrad's java-telegram-bot-api sends for
 * SendMessage) or {@code multipart/form-data} (text parts). Stateless: static methods, called on the server's threads.
 */
final class FakeTelegramRequests {
    private static final ObjectMapper JSON = new ObjectMapper();

    private FakeTelegramRequests() {
    }

    /** Every parameter of a request: the query string, then a JSON, form or multipart body. */
    static Map<String, String> params(HttpExchange exchange) throws IOException {
        Map<String, String> params = new HashMap<>();
        String query = exchange.getRequestURI().getRawQuery();
        if (query != null) {
            params.putAll(parseForm(query));
        }
        byte[] body = readAll(exchange.getRequestBody());
        if (body.length == 0) {
            return params;
        }
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        String type = contentType == null ? "" : contentType.toLowerCase(Locale.ROOT);
        if (type.startsWith("application/json")) {
            JsonNode node;
            try {
                node = JSON.readTree(body);
            } catch (IOException e) {
                return params; // Telegram answers a malformed body as missing parameters
            }
            if (node != null && node.isObject()) {
                node.fields().forEachRemaining(f ->
                        params.put(f.getKey(), f.getValue().isValueNode() ? f.getValue().asText() : f.getValue().toString()));
            }
        } else if (type.startsWith("multipart/form-data")) {
            params.putAll(parseMultipart(body, contentType));
        } else {
            params.putAll(parseForm(new String(body, StandardCharsets.UTF_8)));
        }
        return params;
    }

    private static Map<String, String> parseForm(String form) {
        Map<String, String> params = new HashMap<>();
        for (String pair : form.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = eq < 0 ? pair : pair.substring(0, eq);
            String v = eq < 0 ? "" : pair.substring(eq + 1);
            params.put(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
        }
        return params;
    }

    // text parts only (sendMessage has no files): name from Content-Disposition, value up to the next boundary
    private static Map<String, String> parseMultipart(byte[] body, String contentType) {
        Map<String, String> params = new HashMap<>();
        Matcher m = Pattern.compile("boundary=\"?([^\";]+)\"?").matcher(contentType);
        if (!m.find()) {
            return params;
        }
        String delimiter = "--" + m.group(1);
        String all = new String(body, StandardCharsets.UTF_8);
        Pattern name = Pattern.compile("name=\"([^\"]*)\"");
        for (String part : all.split(Pattern.quote(delimiter))) {
            int headerEnd = part.indexOf("\r\n\r\n");
            if (headerEnd < 0) {
                continue;
            }
            Matcher n = name.matcher(part.substring(0, headerEnd));
            if (!n.find()) {
                continue;
            }
            String value = part.substring(headerEnd + 4);
            if (value.endsWith("\r\n")) {
                value = value.substring(0, value.length() - 2);
            }
            params.put(n.group(1), value);
        }
        return params;
    }

    /** Reads and discards the body (a request answered without parsing it). */
    static void drain(HttpExchange exchange) throws IOException {
        readAll(exchange.getRequestBody());
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toByteArray();
    }
}
