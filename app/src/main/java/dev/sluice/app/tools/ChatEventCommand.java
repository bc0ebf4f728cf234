package dev.sluice.app.tools;

import dev.sluice.app.ConfigOptions;
import dev.sluice.avro.ChatEvent;
import dev.sluice.avro.ChatEventType;
import dev.sluice.avro.Preference;
import dev.sluice.chat.ChatIds;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerializer;
import dev.sluice.topology.ChatEventValidator;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code sluice chat-event TYPE ...}: writes one record of the contracts in {@code docs/chat-events.md}, as a bot's
 * own backend would: a {@code chat.events} ChatEvent (ACTIVE, BLOCKED, DEACTIVATED, MIGRATED) keyed by the
 * normalised chat id, or a {@code preferences} Preference (DIGEST_OPT_OUT, DIGEST_OPT_IN) keyed by the user id.
 * Avro in the Confluent wire format, idempotent producer ({@code acks=all}). Exit code 0 when written, 2 when
 * the write failed; bad options are reported naming the option and value (exit code 2, picocli's usage error).
 * Single-threaded: picocli's thread owns everything.
 */
@Command(name = "chat-event", mixinStandardHelpOptions = true,
        description = {"Write a chat.events record (ACTIVE, BLOCKED, DEACTIVATED, MIGRATED) or a preferences record "
                + "(DIGEST_OPT_OUT, DIGEST_OPT_IN), as the bot's own backend would (docs/chat-events.md).",
                "E.g. sluice chat-event ACTIVE --bot alerts --chat 123456;  sluice chat-event MIGRATED --bot '*' --chat -4001 --new-chat -1004001;"
                        + "  sluice chat-event DIGEST_OPT_OUT --user u-42"})
public final class ChatEventCommand implements Callable<Integer> {
    /** What to write. The first four are ChatEventType symbols; the last two set Preference.digest_opt_out. */
    public enum Type { ACTIVE, BLOCKED, DEACTIVATED, MIGRATED, DIGEST_OPT_OUT, DIGEST_OPT_IN }

    @Parameters(index = "0", paramLabel = "TYPE", description = "ACTIVE (the user wrote to the bot), BLOCKED, DEACTIVATED, MIGRATED, DIGEST_OPT_OUT, DIGEST_OPT_IN.")
    Type type;

    @Option(names = "--bot", paramLabel = "BOT", description = "Bot id the chat event is about; '*' for every bot of the chat. Required for chat events.")
    String bot;

    @Option(names = "--chat", paramLabel = "CHAT", description = "Chat id (numeric, or @username; normalised: trimmed, @username lower-cased). Required for chat events.")
    String chat;

    @Option(names = "--new-chat", paramLabel = "CHAT", description = "MIGRATED only: the chat's new id (Telegram migrate_to_chat_id).")
    String newChat;

    @Option(names = "--user", paramLabel = "USER", description = "DIGEST_OPT_OUT / DIGEST_OPT_IN: the user id (Notification.user_id; defaults to --chat, as user_id defaults to the chat id).")
    String user;

    @Option(names = "--at", paramLabel = "INSTANT", description = "When it happened, ISO-8601 (default: now). An older fact never overrides a newer one.")
    String at;

    @Mixin
    ConfigOptions config;

    @Spec
    CommandSpec spec;

    private final Clock clock;

    public ChatEventCommand() {
        this(Clock.systemUTC());
    }

    ChatEventCommand(Clock clock) {
        this.clock = clock;
    }

    @Override
    public Integer call() throws Exception {
        Instant when = parseAt();
        Settings s = config.load();
        Topics topics = Topics.from(s);
        ProducerRecord<String, SpecificRecord> record = switch (type) {
            case DIGEST_OPT_OUT, DIGEST_OPT_IN -> preference(topics, when);
            default -> chatEvent(topics, when);
        };
        CachedSchemaRegistryClient registry = CachedSchemaRegistryClient.fromSettings(s);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        java.util.Map<String, Object> props = KafkaClients.producer(s, "sluice-chat-event");
        java.time.Duration bound = ProducerAnswers.confirmBound(props);
        try (KafkaProducer<String, SpecificRecord> producer = new KafkaProducer<>(props,
                new StringSerializer(), new SpecificAvroSerializer<>(registry))) {
            RecordMetadata md;
            try {
                // bounded: an answer that never comes (ProduceUnansweredIdIT) must not hold the command forever
                md = producer.send(record).get(bound.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                producer.close(java.time.Duration.ZERO);
                err.println("chat-event: Kafka did not confirm writing " + type + " to " + record.topic() + " within "
                        + bound.toSeconds() + " s (it may or may not be written)");
                err.flush();
                return 2;
            }
            out.printf("chat-event: %s written to %s-%d@%d, key %s%n", type, md.topic(), md.partition(), md.offset(), record.key());
            out.flush();
            return 0;
        } catch (ExecutionException e) {
            err.println("chat-event: writing " + type + " to " + record.topic() + " failed: " + e.getCause().getMessage());
            err.flush();
            return 2;
        }
    }

    private ProducerRecord<String, SpecificRecord> chatEvent(Topics topics, Instant when) {
        String chatId = require("--chat", chat);
        String botId = require("--bot", bot).strip();
        String to = null;
        if (type == Type.MIGRATED) {
            to = ChatIds.normalise(require("--new-chat", newChat));
            if (to.equals(chatId)) {
                throw new ParameterException(spec.commandLine(), "--new-chat '" + newChat + "' is the same chat as --chat '" + chat + "'");
            }
        } else if (newChat != null) {
            throw new ParameterException(spec.commandLine(), "--new-chat '" + newChat + "' is for MIGRATED only, not " + type);
        }
        ChatEvent event = ChatEvent.newBuilder().setBotId(botId).setChatId(chatId).setType(ChatEventType.valueOf(type.name()))
                .setNewChatId(to).setAt(when).build();
        ChatEventValidator.Problem problem = ChatEventValidator.problem(chatId, event); // the topology's own rule
        if (problem != null) {
            String option = switch (problem.field()) {
                case "bot_id" -> "--bot";
                case "new_chat_id" -> "--new-chat";
                default -> "--chat";
            };
            throw new ParameterException(spec.commandLine(), option + ": " + problem.message() + "; nothing was written");
        }
        return new ProducerRecord<>(topics.chatEvents(), chatId, event);
    }

    private ProducerRecord<String, SpecificRecord> preference(Topics topics, Instant when) {
        String userId = user != null ? user.strip() : chat != null ? ChatIds.normalise(chat) : null;
        if (userId == null || userId.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--user is required for " + type + " (or --chat, the default user id)");
        }
        Preference p = Preference.newBuilder().setUserId(userId).setDigestOptOut(type == Type.DIGEST_OPT_OUT).setAt(when).build();
        return new ProducerRecord<>(topics.preferences(), userId, p);
    }

    private String require(String option, String value) {
        if (value == null || value.isBlank()) {
            throw new ParameterException(spec.commandLine(), option + " is required for " + type + (value == null ? "" : ", was '" + value + "'"));
        }
        return option.equals("--bot") ? value : ChatIds.normalise(value);
    }

    private Instant parseAt() {
        if (at == null) {
            return clock.instant();
        }
        try {
            return Instant.parse(at.strip());
        } catch (DateTimeParseException e) {
            throw new ParameterException(spec.commandLine(), "--at '" + at + "' is not an ISO-8601 instant (e.g. 2025-07-30T09:00:00Z)");
        }
    }
}
