package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.config.Settings;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryException;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link InProcessSchemaRegistry#injectFaults} and the lookup-only path of read-only registry credentials. */
class RegistryFaultsAndLookupTest {
    private final InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();

    @AfterEach
    void stop() {
        registry.close();
    }

    private CachedSchemaRegistryClient client() {
        return CachedSchemaRegistryClient.fromSettings(Settings.of(Map.of("schema.registry.url", registry.url(),
                "schema.registry.retry.max.ms", "0")));
    }

    @Test
    void an_unreachable_registry_is_a_retriable_failure_without_an_answer_and_clearing_the_fault_serves_again() {
        registry.injectFaults((method, path) -> InProcessSchemaRegistry.UNREACHABLE);
        CachedSchemaRegistryClient client = client();
        assertThatThrownBy(() -> client.register("x-value", DeliveryResult.getClassSchema()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.retriable()).isTrue();
                    assertThat(e.httpStatus()).isEqualTo(SchemaRegistryException.NO_RESPONSE);
                });
        registry.clearFaults();
        assertThat(client.register("x-value", DeliveryResult.getClassSchema())).isEqualTo(1);
    }

    @Test
    void a_status_injected_for_one_path_refuses_only_that_path() {
        registry.injectFaults((method, path) -> method.equals("POST") && path.contains("results") ? 403 : null);
        CachedSchemaRegistryClient client = client();
        assertThatThrownBy(() -> client.register("delivery.results-value", DeliveryResult.getClassSchema()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(403);
                    assertThat(e.retriable()).isFalse();
                });
        assertThat(client.register("other-value", DeliveryResult.getClassSchema())).isEqualTo(1);
    }

    @Test
    void lookup_only_finds_a_registered_schema_and_never_registers_one() {
        CachedSchemaRegistryClient client = client();
        assertThatThrownBy(() -> client.lookup("delivery.results-value", DeliveryResult.getClassSchema()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.errorCode()).isEqualTo(40401));
        assertThat(registry.schemaCount()).isZero();
        int id = client.register("delivery.results-value", DeliveryResult.getClassSchema());
        // read-only credentials: registering is refused, looking up is not
        registry.injectFaults((method, path) -> path.endsWith("/versions") ? 403 : null);
        CachedSchemaRegistryClient readOnly = client();
        assertThat(readOnly.lookup("delivery.results-value", DeliveryResult.getClassSchema())).isEqualTo(id);
        SpecificAvroSerializer<DeliveryResult> serializer = new SpecificAvroSerializer<>();
        serializer.configure(Map.of("schema.registry.url", registry.url(), "schema.registry.auto.register", "false"),
                false);
        byte[] bytes = serializer.serialize("delivery.results", DeliveryResult.newBuilder().setMessageId("m")
                .setBotId("b").setChatId("1").setStatus(DeliveryStatus.DELIVERED).setResultAt(Instant.now()).build());
        assertThat(bytes[4]).as("the looked-up id in the wire format").isEqualTo((byte) id);
        assertThat(registry.schemaCount()).isEqualTo(1);
    }
}
