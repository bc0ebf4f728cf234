package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Confluent REST endpoints beyond register and fetch, over real HTTP: compatibility config (global and per
 * subject), compatibility checks and their enforcement on register, reverse lookups by id, bare schemas, and
 * schema references, with Confluent's status codes and error codes.
 */
class InProcessSchemaRegistryConfluentApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String V1 = "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"}]}";
    /** Adds a field with a default: BACKWARD and FORWARD compatible with V1. */
    private static final String V2 = "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"},"
            + "{\"name\":\"y\",\"type\":\"int\",\"default\":0}]}";
    /** Adds a field without a default: a V3 reader cannot read V1/V2 data (not BACKWARD). */
    private static final String V3_BREAKING = "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"},"
            + "{\"name\":\"z\",\"type\":\"string\"}]}";

    private final InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void stop() {
        registry.close();
    }

    @Test
    void compatibilityConfigGlobalAndPerSubject() throws Exception {
        assertThat(ok("GET", "/config", null).toString()).isEqualTo("{\"compatibilityLevel\":\"BACKWARD\"}");
        expectError("GET", "/config/t-value", null, 404, 40408);
        assertThat(ok("GET", "/config/t-value?defaultToGlobal=true", null).get("compatibilityLevel").asText()).isEqualTo("BACKWARD");

        assertThat(ok("PUT", "/config/t-value", "{\"compatibility\":\"full\"}").toString()).isEqualTo("{\"compatibility\":\"FULL\"}");
        assertThat(ok("GET", "/config/t-value", null).get("compatibilityLevel").asText()).isEqualTo("FULL");
        assertThat(ok("PUT", "/config", "{\"compatibility\":\"NONE\"}").get("compatibility").asText()).isEqualTo("NONE");
        assertThat(ok("GET", "/config", null).get("compatibilityLevel").asText()).isEqualTo("NONE");
        expectError("PUT", "/config/t-value", "{\"compatibility\":\"SIDEWAYS\"}", 422, 42203);

        assertThat(ok("DELETE", "/config/t-value", null).get("compatibilityLevel").asText()).isEqualTo("FULL");
        expectError("GET", "/config/t-value", null, 404, 40408);
    }

    @Test
    void compatibilityIsCheckedOnRequestAndEnforcedOnRegister() throws Exception {
        register("t-value", V1);
        expectError("POST", "/compatibility/subjects/nope/versions/latest", schema(V2), 404, 40401);
        expectError("POST", "/compatibility/subjects/t-value/versions/7", schema(V2), 404, 40402);
        assertThat(ok("POST", "/compatibility/subjects/t-value/versions/latest", schema(V2)).toString())
                .isEqualTo("{\"is_compatible\":true}");
        JsonNode breaking = ok("POST", "/compatibility/subjects/t-value/versions/1?verbose=true", schema(V3_BREAKING));
        assertThat(breaking.get("is_compatible").asBoolean()).isFalse();
        assertThat(breaking.get("messages").toString()).contains("READER_FIELD_MISSING_DEFAULT_VALUE", "z");
        assertThat(ok("POST", "/compatibility/subjects/t-value/versions", schema(V3_BREAKING)).get("is_compatible").asBoolean()).isFalse();

        // BACKWARD (the default) refuses the breaking version with Confluent's 409; NONE lets it in.
        expectError("POST", "/subjects/t-value/versions", schema(V3_BREAKING), 409, 409);
        assertThat(ok("GET", "/subjects/t-value/versions", null).toString()).isEqualTo("[1]");
        ok("PUT", "/config/t-value", "{\"compatibility\":\"NONE\"}");
        assertThat(register("t-value", V3_BREAKING)).isEqualTo(2);
        assertThat(ok("GET", "/subjects/t-value/versions", null).toString()).isEqualTo("[1,2]");
    }

    @Test
    void reverseLookupsByIdAndBareSchemas() throws Exception {
        int id = register("a-value", V1);
        register("b-value", V1);
        assertThat(ok("GET", "/schemas/ids/" + id + "/versions", null).toString())
                .isEqualTo("[{\"subject\":\"a-value\",\"version\":1},{\"subject\":\"b-value\",\"version\":1}]");
        assertThat(ok("GET", "/schemas/ids/" + id + "/subjects", null).toString()).isEqualTo("[\"a-value\",\"b-value\"]");
        expectError("GET", "/schemas/ids/99/versions", null, 404, 40403);
        assertThat(ok("GET", "/subjects/a-value/versions/latest/schema", null).get("name").asText()).isEqualTo("A");
        assertThat(ok("GET", "/schemas/types", null).toString()).isEqualTo("[\"AVRO\"]");
        assertThat(ok("GET", "/mode", null).get("mode").asText()).isEqualTo("READWRITE");
        expectError("GET", "/nothing/here", null, 404, 404);
        expectError("DELETE", "/subjects/a-value/versions", null, 405, 405);
    }

    @Test
    void schemaReferencesResolveNamedTypesFromOtherSubjects() throws Exception {
        String money = "{\"type\":\"record\",\"name\":\"Money\",\"namespace\":\"shop\",\"fields\":[{\"name\":\"cents\",\"type\":\"long\"}]}";
        int moneyId = register("shop.Money", money);
        String order = "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"shop\",\"fields\":[{\"name\":\"total\",\"type\":\"Money\"}]}";
        ObjectNode withRef = (ObjectNode) JSON.readTree(schema(order));
        withRef.putArray("references").addObject().put("name", "shop.Money").put("subject", "shop.Money").put("version", 1);

        // Without the reference the type is unknown: invalid schema.
        expectError("POST", "/subjects/orders-value/versions", schema(order), 422, 42201);
        int orderId = ok("POST", "/subjects/orders-value/versions", withRef.toString()).get("id").asInt();
        assertThat(orderId).isNotEqualTo(moneyId);
        // Idempotent, and found by lookup with its references.
        assertThat(ok("POST", "/subjects/orders-value/versions", withRef.toString()).get("id").asInt()).isEqualTo(orderId);
        assertThat(ok("POST", "/subjects/orders-value", withRef.toString()).get("version").asInt()).isEqualTo(1);

        JsonNode byId = ok("GET", "/schemas/ids/" + orderId, null);
        assertThat(byId.get("schema").asText()).doesNotContain("cents"); // referenced types are not inlined
        assertThat(byId.get("references").toString()).isEqualTo("[{\"name\":\"shop.Money\",\"subject\":\"shop.Money\",\"version\":1}]");
        assertThat(ok("GET", "/subjects/orders-value/versions/1", null).get("references").get(0).get("subject").asText())
                .isEqualTo("shop.Money");

        ObjectNode dangling = withRef.deepCopy();
        ((ObjectNode) dangling.get("references").get(0)).put("version", 5);
        expectError("POST", "/subjects/orders2-value/versions", dangling.toString(), 422, 42201);
    }

    private int register(String subject, String avro) throws Exception {
        return ok("POST", "/subjects/" + subject + "/versions", schema(avro)).get("id").asInt();
    }

    private static String schema(String avro) {
        return JSON.createObjectNode().put("schema", avro).toString();
    }

    private JsonNode ok(String method, String path, String body) throws Exception {
        HttpResponse<String> r = send(method, path, body);
        assertThat(r.statusCode()).as(method + " " + path + ": " + r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private void expectError(String method, String path, String body, int status, int errorCode) throws Exception {
        HttpResponse<String> r = send(method, path, body);
        assertThat(r.statusCode()).as(method + " " + path + ": " + r.body()).isEqualTo(status);
        JsonNode json = JSON.readTree(r.body());
        assertThat(json.get("error_code").asInt()).as(r.body()).isEqualTo(errorCode);
        assertThat(json.get("message").asText()).isNotBlank();
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(registry.url() + path))
                .header("Content-Type", "application/vnd.schemaregistry.v1+json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
