package dev.sluice.topology;

import dev.sluice.avro.Lane;
import dev.sluice.avro.Notification;
import dev.sluice.avro.OutboundMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import org.apache.kafka.streams.processor.api.ContextualFixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;

/**
 * Last step of a lane: turns a notification (already keyed by chat id) into the {@link OutboundMessage}
 * the senders consume. {@code due_at} is the wall-clock time of the processor context
 * ({@code currentSystemTimeMs()}: the system clock in KafkaStreams, the mock clock in
 * TopologyTestDriver), i.e. when the topology released the message.
 */
final class ToOutboundProcessor extends ContextualFixedKeyProcessor<String, Notification, OutboundMessage> {
    private final Lane lane;
    private final Classifier classifier;

    ToOutboundProcessor(Lane lane, Classifier classifier) {
        this.lane = lane;
        this.classifier = classifier;
    }

    @Override
    public void process(FixedKeyRecord<String, Notification> record) {
        Notification n = record.value();
        OutboundMessage out = OutboundMessage.newBuilder()
                .setId(n.getId())
                .setBotId(n.getBotId())
                .setChatId(n.getChatId())
                .setKind(n.getKind())
                .setEventClass(classifier.classify(n))
                .setLane(lane)
                .setText(n.getText())
                .setParseMode(n.getParseMode())
                .setCreatedAt(n.getCreatedAt())
                .setDueAt(Instant.ofEpochMilli(context().currentSystemTimeMs()))
                .setExpiresAt(n.getExpiresAt())
                .setDigestCount(0)
                .setFoldedIds(List.of())
                .setBotPool(new ArrayList<>(n.getBotPool()))
                .setAttributes(new HashMap<>(n.getAttributes()))
                .build();
        context().forward(record.withValue(out));
    }
}
