package dev.sluice.topology;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;

/**
 * Resolves the class of a notification (DESIGN.md, Event classes). The walking skeleton uses the
 * event's own class, else ROUTINE; the configured {@code kind} patterns come with issue 5.
 */
@FunctionalInterface
public interface Classifier {
    NotificationClass classify(Notification notification);

    /** The event's own {@code event_class}, else {@link NotificationClass#ROUTINE}. */
    static Classifier eventClassOrRoutine() {
        return n -> n.getEventClass() != null ? n.getEventClass() : NotificationClass.ROUTINE;
    }
}
