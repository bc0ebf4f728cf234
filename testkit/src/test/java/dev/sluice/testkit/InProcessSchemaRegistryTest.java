package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.avro.Notification;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryException;
import dev.sluice.schemas.SpecificAvroSerde;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class InProcessSchemaRegistryTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void stop() {
        registry.close();
    }

    @Test
    void clientRegistersAndFetchesOverHttpAndCachesBothWays() {
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(registry.url());
        int id = client.register("notifications-value", Notification.getClassSchema());
        assertThat(id).isEqualTo(1);
        long afterFirst = registry.requestCount();
        assertThat(client.register("notifications-value", Notification.getClassSchema())).isEqualTo(id);
        assertThat(client.getById(id)).isEqualTo(Notification.getClassSchema());
        assertThat(registry.requestCount()).as("cached: no second HTTP call").isEqualTo(afterFirst);

        // Same schema under another subject: same global id. A new schema: the next id.
        assertThat(client.register("notifications.backfill-value", Notification.getClassSchema())).isEqualTo(id);
        assertThat(client.register("outbox.live-value", OutboundMessage.getClassSchema())).isEqualTo(2);

        CachedSchemaRegistryClient fresh = CachedSchemaRegistryClient.forUrl(registry.url());
        long before = registry.requestCount();
        assertThat(fresh.getById(2)).isEqualTo(OutboundMessage.getClassSchema());
        assertThat(fresh.getById(2)).isEqualTo(OutboundMessage.getClassSchema());
        assertThat(registry.requestCount() - before).isEqualTo(1);
    }

    @Test
    void unknownIdIsAPermanent40403() {
        CachedSchemaRegistryClient client = CachedSchemaRegistryClient.forUrl(registry.url());
        assertThatThrownBy(() -> client.getById(999))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.errorCode()).isEqualTo(40403);
                    assertThat(e.httpStatus()).isEqualTo(404);
                    assertThat(e.retriable()).isFalse();
                });
    }

    @Test
    void serdeRoundTripsThroughTheHttpRegistryWithOneCallPerSchema() {
        SpecificAvroSerde<Notification> writerSide = new SpecificAvroSerde<>();
        writerSide.configure(Map.of("schema.registry.url", registry.url(), "sluice.avro.type", Notification.class.getName()), false);
        SpecificAvroSerde<Notification> readerSide = new SpecificAvroSerde<>();
        readerSide.configure(Map.of("schema.registry.url", registry.url(), "sluice.avro.type", Notification.class.getName()), false);
        long before = registry.requestCount();
        for (int i = 0; i < 50; i++) {
            Notification n = Notification.newBuilder().setId("n-" + i).setBotId("alerts").setChatId("42").setKind("k")
                    .setText("hello " + i).setCreatedAt(Instant.ofEpochMilli(i)).build();
            byte[] bytes = writerSide.serializer().serialize("notifications", n);
            assertThat(readerSide.deserializer().deserialize("notifications", bytes)).isEqualTo(n);
        }
        assertThat(registry.requestCount() - before).as("one register + one fetch").isEqualTo(2);
    }

    @Test
    void servesTheConfluentRestSubset() throws Exception {
        String avro = "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"}]}";
        String body = JSON.createObjectNode().put("schema", avro).toString();
        assertThat(call("POST", "/subjects/t-value/versions", body).get("id").asInt()).isEqualTo(1);
        // Same schema in other whitespace: same id.
        String spaced = JSON.createObjectNode().put("schema", avro.replace(",", " , ")).toString();
        assertThat(call("POST", "/subjects/t-value/versions", spaced).get("id").asInt()).isEqualTo(1);
        String v2 = avro.replace("}]}", "},{\"name\":\"y\",\"type\":\"int\",\"default\":0}]}");
        assertThat(call("POST", "/subjects/t-value/versions", JSON.createObjectNode().put("schema", v2).toString()).get("id").asInt()).isEqualTo(2);

        assertThat(call("GET", "/subjects", null).toString()).isEqualTo("[\"t-value\"]");
        assertThat(call("GET", "/subjects/t-value/versions", null).toString()).isEqualTo("[1,2]");
        JsonNode latest = call("GET", "/subjects/t-value/versions/latest", null);
        assertThat(latest.get("version").asInt()).isEqualTo(2);
        assertThat(latest.get("id").asInt()).isEqualTo(2);
        assertThat(call("GET", "/subjects/t-value/versions/1", null).get("id").asInt()).isEqualTo(1);
        JsonNode lookup = call("POST", "/subjects/t-value", body);
        assertThat(lookup.get("version").asInt()).isEqualTo(1);
        assertThat(lookup.get("subject").asText()).isEqualTo("t-value");
        assertThat(call("GET", "/schemas/ids/2", null).get("schema").asText()).contains("\"y\"");

        assertError("GET", "/schemas/ids/77", null, 404, 40403);
        assertError("GET", "/subjects/nope/versions", null, 404, 40401);
        assertError("GET", "/subjects/t-value/versions/9", null, 404, 40402);
        assertError("GET", "/subjects/t-value/versions/abc", null, 422, 42202);
        assertError("POST", "/subjects/t-value/versions", "{\"schema\":\"{not avro\"}", 422, 42201);
        assertError("POST", "/subjects/other/versions", "{\"schema\":\"\\\"int\\\"\"}", 200, -1);
        assertError("POST", "/subjects/t-value", JSON.createObjectNode().put("schema", "\"string\"").toString(), 404, 40403);
    }

    @Test
    void basicAuthIsSentAndNeverShown() {
        registry.requireBasicAuth("sluice", "s3cret-pw");
        CachedSchemaRegistryClient anonymous = CachedSchemaRegistryClient.forUrl(registry.url());
        assertThatThrownBy(() -> anonymous.register("a-value", Notification.getClassSchema()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(401);
                    assertThat(e.retriable()).isFalse();
                });
        CachedSchemaRegistryClient client = CachedSchemaRegistryClient.fromSettings(Settings.of(Map.of(
                "schema.registry.url", registry.url(), "basic.auth.user.info", "sluice:s3cret-pw")));
        assertThat(client.register("a-value", Notification.getClassSchema())).isEqualTo(1);
        assertThat(client.toString()).doesNotContain("s3cret-pw").contains("redacted");
    }

    @Test
    void failsOverToTheNextUrlAndClassifiesOutagesAsRetriable() throws Exception {
        int deadPort;
        try (ServerSocket s = new ServerSocket(0)) {
            deadPort = s.getLocalPort();
        }
        CachedSchemaRegistryClient client = CachedSchemaRegistryClient.forUrl("http://127.0.0.1:" + deadPort + "," + registry.url());
        assertThat(client.register("a-value", Notification.getClassSchema())).isEqualTo(1);

        CachedSchemaRegistryClient onlyDead = client("http://127.0.0.1:" + deadPort, 0);
        assertThatThrownBy(() -> onlyDead.getById(1))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.retriable()).isTrue())
                .hasMessageContaining("127.0.0.1:" + deadPort);

        registry.failNextRequests(1, 503);
        CachedSchemaRegistryClient noRetry = client(registry.url(), 0);
        assertThatThrownBy(() -> noRetry.getById(1))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.retriable()).isTrue();
                    assertThat(e.errorCode()).isEqualTo(50301);
                });
        assertThat(noRetry.getById(1)).isEqualTo(Notification.getClassSchema());
    }

    @Test
    void retriesRetriableFailuresWithinItsBudgetButNotPermanentOnes() {
        registry.failNextRequests(3, 503);
        long before = registry.requestCount();
        CachedSchemaRegistryClient client = client(registry.url(), 5_000);
        int id = client.register("a-value", Notification.getClassSchema());
        assertThat(client.getById(id)).isEqualTo(Notification.getClassSchema());
        assertThat(registry.requestCount() - before).as("3 failures, then the register; getById is cached").isEqualTo(4);

        before = registry.requestCount();
        assertThatThrownBy(() -> client.getById(42))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.errorCode()).isEqualTo(40403));
        assertThat(registry.requestCount() - before).as("permanent: no retry").isEqualTo(1);
    }

    @Test
    void aRegistryThatNeverAnswersTimesOutWithinTheRetryBudget() throws Exception {
        try (ServerSocket silent = new ServerSocket(0)) { // accepts connections (backlog) but never answers
            CachedSchemaRegistryClient client = CachedSchemaRegistryClient.fromSettings(Settings.of(Map.of(
                    "schema.registry.url", "http://127.0.0.1:" + silent.getLocalPort(),
                    "schema.registry.request.timeout.ms", "300",
                    "schema.registry.retry.max.ms", "1000")));
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.getById(1))
                    .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.retriable()).isTrue());
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(1000)).isLessThan(Duration.ofSeconds(4));
        }
    }

    private static CachedSchemaRegistryClient client(String url, long retryMaxMs) {
        return CachedSchemaRegistryClient.fromSettings(Settings.of(Map.of(
                "schema.registry.url", url, "schema.registry.retry.max.ms", Long.toString(retryMaxMs))));
    }

    private JsonNode call(String method, String path, String body) throws Exception {
        HttpResponse<String> r = send(method, path, body);
        assertThat(r.statusCode()).as(method + " " + path + ": " + r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/vnd.schemaregistry.v1+json");
        return JSON.readTree(r.body());
    }

    private void assertError(String method, String path, String body, int status, int errorCode) throws Exception {
        HttpResponse<String> r = send(method, path, body);
        assertThat(r.statusCode()).as(method + " " + path + ": " + r.body()).isEqualTo(status);
        if (errorCode > 0) {
            JsonNode json = JSON.readTree(r.body());
            assertThat(json.get("error_code").asInt()).isEqualTo(errorCode);
            assertThat(json.get("message").asText()).isNotBlank();
        }
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(registry.url() + path))
                .header("Content-Type", "application/vnd.schemaregistry.v1+json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
