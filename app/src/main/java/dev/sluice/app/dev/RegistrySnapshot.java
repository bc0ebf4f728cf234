package dev.sluice.app.dev;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Keeps the in-process schema registry's content in a file across {@code sluice dev} restarts, so records kept in
 * Kafka's log still name the right schema ids. {@link #save} reads every subject's versions over the registry's
 * REST API and writes them (id, subject, version, schema) to a JSON file, atomically; {@link #restore} registers
 * them again in id order, which gives every schema its old id because the registry numbers new schemas 1, 2, 3...
 * in registration order, and checks that it did. Stateless: the caller (the dev stack's snapshot thread and its
 * shutdown) owns the file.
 */
final class RegistrySnapshot {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private RegistrySnapshot() {
    }

    /** One registered version. */
    record Entry(int id, String subject, int version, ObjectNode body) {
    }

    /** @return the number of subject versions written */
    static int save(String registryUrl, Path file) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
        List<Entry> entries = new ArrayList<>();
        for (JsonNode subject : get(http, registryUrl + "/subjects")) {
            String s = subject.asText();
            for (JsonNode version : get(http, registryUrl + "/subjects/" + enc(s) + "/versions")) {
                JsonNode v = get(http, registryUrl + "/subjects/" + enc(s) + "/versions/" + version.asInt());
                ObjectNode body = JSON.createObjectNode().put("schema", v.get("schema").asText());
                if (v.hasNonNull("schemaType")) {
                    body.set("schemaType", v.get("schemaType"));
                }
                if (v.hasNonNull("references")) {
                    body.set("references", v.get("references"));
                }
                entries.add(new Entry(v.get("id").asInt(), s, version.asInt(), body));
            }
        }
        entries.sort(Comparator.comparingInt(Entry::id).thenComparing(Entry::subject).thenComparingInt(Entry::version));
        ArrayNode out = JSON.createArrayNode();
        for (Entry e : entries) {
            out.addObject().put("id", e.id()).put("subject", e.subject()).put("version", e.version()).set("body", e.body());
        }
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out));
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return entries.size();
    }

    /**
     * Registers the saved versions again, in id order, into an empty registry.
     *
     * @return the number of subject versions registered (0 when the file does not exist)
     * @throws IllegalStateException when a schema comes back with another id than it had
     */
    static int restore(String registryUrl, Path file) throws IOException, InterruptedException {
        if (!Files.exists(file)) {
            return 0;
        }
        HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
        int n = 0;
        for (JsonNode e : JSON.readTree(file.toFile())) {
            String subject = e.get("subject").asText();
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create(registryUrl + "/subjects/" + enc(subject) + "/versions"))
                    .timeout(TIMEOUT).header("Content-Type", CONTENT_TYPE)
                    .POST(HttpRequest.BodyPublishers.ofString(e.get("body").toString())).build(), HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() != 200) {
                throw new IllegalStateException("restoring subject " + subject + " from " + file + ": HTTP " + answer.statusCode() + " " + answer.body());
            }
            int id = JSON.readTree(answer.body()).get("id").asInt();
            if (id != e.get("id").asInt()) {
                throw new IllegalStateException("restoring subject " + subject + " from " + file + ": the registry gave id " + id
                        + " to a schema that had id " + e.get("id").asInt() + " (was the registry not empty?)");
            }
            n++;
        }
        return n;
    }

    private static JsonNode get(HttpClient http, String url) throws IOException, InterruptedException {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException("GET " + url + ": HTTP " + answer.statusCode());
        }
        return JSON.readTree(answer.body());
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
