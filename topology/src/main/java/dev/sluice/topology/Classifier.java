package dev.sluice.topology;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;

/**
 * Resolves the class of a notification (DESIGN.md, Event classes). The topology uses
 * {@link KindPatternClassifier} (the event's own class, else the first matching {@code kind} pattern, else
 * ROUTINE).
 */
@FunctionalInterface
public interface Classifier {
    NotificationClass classify(Notification notification);

    /** The event's own {@code event_class}, else {@link NotificationClass#ROUTINE}. */
    static Classifier eventClassOrRoutine() {
        return n -> n.getEventClass() != null ? n.getEventClass() : NotificationClass.ROUTINE;
    }
}
