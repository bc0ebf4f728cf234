package dev.sluice.schemas;

import dev.sluice.avro.ChatEvent;
import dev.sluice.avro.ChatEventType;
import dev.sluice.avro.ChatStatus;
import dev.sluice.avro.DigestEntry;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.EditPart;
import dev.sluice.avro.InlineButton;
import dev.sluice.avro.InlineKeyboard;
import dev.sluice.avro.Lane;
import dev.sluice.avro.Media;
import dev.sluice.avro.MediaType;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.Preference;
import dev.sluice.avro.SenderStatus;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.avro.util.ClassSecurityValidator;

/**
 * Avro 1.12 refuses to instantiate classes that are not on its trust list (CVE-2024-47561 hardening),
 * including our own generated records and enums, e.g. when it resolves an enum default or reads an
 * enum field. This adds exactly Sluice's generated classes to the global trust list, once per JVM.
 * The serde calls it; so does every entry point that builds records before a serde exists.
 */
public final class AvroTrust {
    private static final AtomicBoolean DONE = new AtomicBoolean();

    private AvroTrust() {
    }

    public static void ensure() {
        if (DONE.compareAndSet(false, true)) {
            ClassSecurityValidator.ClassSecurityPredicate ours = ClassSecurityValidator.builder()
                    .add(Notification.class).add(OutboundMessage.class).add(DeliveryResult.class).add(ChatEvent.class)
                    .add(NotificationClass.class).add(Lane.class).add(DeliveryStatus.class).add(ChatEventType.class)
                    .add(SenderStatus.class).add(Preference.class).add(ChatStatus.class).add(DigestEntry.class)
                    .add(InlineKeyboard.class).add(InlineButton.class).add(Media.class).add(MediaType.class)
                    .add(EditPart.class)
                    .build();
            ClassSecurityValidator.setGlobal(ClassSecurityValidator.composite(ClassSecurityValidator.getGlobal(), ours));
        }
    }
}
