package dev.sluice.bench;

import dev.sluice.app.demo.ReportAnalyzer.ProviderMessage;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Messages a scenario sends, built once in two shapes: the {@link OutboundMessage} the sender consumes
 * from {@code outbox.live} (what the topology would have written) and the {@link Notification} it stands
 * for, which the demo's {@code ReportAnalyzer} matches against what FakeTelegram accepted (by chat and text,
 * so every text is unique). Per chat, messages are listed in production order.
 */
public final class Workload {
    private final List<OutboundMessage> outbound = new ArrayList<>();
    private final List<Notification> notifications = new ArrayList<>();

    /** Appends one message; {@code tag} starts its id and text so a phase can be filtered. */
    public void add(String tag, int seq, String botId, String chatId, NotificationClass cls, Instant now) {
        String id = tag + "-" + seq;
        String text = "[" + tag + "] #" + seq + " to " + chatId;
        outbound.add(OutboundMessage.newBuilder()
                .setId(id).setBotId(botId).setChatId(chatId).setKind("bench." + tag).setEventClass(cls)
                .setText(text).setCreatedAt(now).setDueAt(now).build());
        notifications.add(Notification.newBuilder()
                .setId(id).setBotId(botId).setChatId(chatId).setKind("bench." + tag).setEventClass(cls)
                .setText(text).setCreatedAt(now).build());
    }

    /**
     * {@code perChat} messages to each of {@code chats} chats of one bot, round-robin over the chats so the
     * backlog is spread as a real one is (chat ids {@code base + i}).
     */
    public static Workload roundRobin(String tag, String botId, long chatBase, int chats, int perChat) {
        Workload w = new Workload();
        Instant now = Instant.now();
        int seq = 0;
        for (int k = 0; k < perChat; k++) {
            for (int c = 0; c < chats; c++) {
                w.add(tag, seq++, botId, Long.toString(chatBase + c), NotificationClass.ROUTINE, now);
            }
        }
        return w;
    }

    public List<OutboundMessage> outbound() {
        return outbound;
    }

    public List<Notification> notifications() {
        return notifications;
    }

    public int size() {
        return outbound.size();
    }

    /** FakeTelegram's accepted messages whose text carries {@code tag}, as the analyzer's provider messages. */
    public static List<ProviderMessage> accepted(FakeTelegram telegram, String tag) {
        String prefix = "[" + tag + "]";
        return telegram.accepted().stream().filter(a -> a.text() != null && a.text().startsWith(prefix))
                .map(a -> new ProviderMessage(a.chatId(), a.text(), a.acceptedAtMillis())).toList();
    }

    /**
     * Random tokens in Telegram's shape ({@code <digits>:<35 chars>}), one per bot id; they exist only in this
     * JVM and the children's environment and are never printed. The digits (FakeTelegram's bot id) are
     * {@code 700000001 + index}.
     */
    public static Map<String, String> tokens(List<String> botIds) {
        SecureRandom r = new SecureRandom();
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i < botIds.size(); i++) {
            StringBuilder sb = new StringBuilder().append(700_000_001 + i).append(':');
            for (int k = 0; k < 35; k++) {
                sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            out.put(botIds.get(i), sb.toString());
        }
        return out;
    }
}
