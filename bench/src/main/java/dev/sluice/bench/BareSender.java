package dev.sluice.bench;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.schemas.SpecificAvroSerializer;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.sender.telegram.TelegramTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Issue 19's bare baseline sender, run by {@code many-bots} as its own JVM beside (after) the real senders: only the
 * work a sender cannot avoid, with the same clients. It consumes {@code outbox.live} (a KafkaConsumer with the
 * sender's consumer settings: read_committed, cooperative-sticky, {@code sender.buffer.max.records}-derived
 * max.poll.records, no auto commit), decodes the Avro {@link OutboundMessage} (the same serde against the same
 * registry), makes one provider call with the sender's own {@link TelegramTransport} (the same OkHttp client, pengrad
 * and timeouts from {@link SenderConfig}), and produces the {@link DeliveryResult} (the result producer's settings:
 * idempotent, acks=all, linger 5 ms). No budget, no sent marks, no lanes, no Redis at all.
 *
 * <p>To keep the provider honest without a budget it paces in memory: each bot at {@code bare.bot.rate.per.s} (this
 * process's share of the bot's limit; FakeTelegram answers 429 above 30 calls per bot in any sliding second, and a call
 * during the penalty extends it), and at most floor({@code bare.bot.rate.per.s}) calls per bot whose window is open, a
 * call's window lasting from its take until 1 s (and a 10 ms guard) after its answer: the provider sees at most
 * floor(share) calls of each process per bot in any sliding second, whatever the delay between a thread taking a call
 * and the call's arrival (with 3 processes and the default 28/s: 3 x 9 = 27 of the 30). Issue 19: pacing each bot at
 * its share per second from the take time alone, 3 uncoordinated processes got 12,012 x 429 in one full-size run on a
 * quiet machine (up to 10 calls of each process fit one second, and a late call arrives closer to the next; the first
 * 429 then opens a bot penalty that the other processes' calls keep extending). Each chat gets one call per
 * {@code bare.chat.interval.ms} (default 1000; FakeTelegram: 1/s per chat, burst 3) counted from the answer of its
 * last, the chats of a bot taking turns; a 429's {@code retry_after} is waited out before that bot's next call (the
 * message is sent again). Pacing is bookkeeping in memory: the work per message (one poll share, one decode, one
 * provider call, one result record) is the same. Offsets: the consumed positions are committed asynchronously every
 * second (at-most-once for a crash: a baseline, not a sender).
 *
 * <p>Threads: the main thread polls (it alone owns the consumer; it pauses every partition while more than
 * {@code sender.buffer.max.records} records wait); {@code sender.max.in.flight} sending threads take the next due bot
 * from a {@link DelayQueue}; a {@link Bot}'s queue and pacing state are guarded by the bot's monitor. The producer and
 * the transport are thread-safe.
 */
public final class BareSender {
    /** The line {@link SenderProcess} waits for. */
    static final String READY_LINE = "sluice bare sender: running";
    /** This process's share of each bot's rate, msg/s. */
    static final String RATE_KEY = "bare.bot.rate.per.s";
    /** The least time between two calls to one chat, ms (FakeTelegram: 1/s per chat, burst 3). */
    static final String CHAT_INTERVAL_KEY = "bare.chat.interval.ms";

    private final Map<String, Bot> bots = new HashMap<>();
    private final DelayQueue<Bot> due = new DelayQueue<>();
    private final AtomicInteger buffered = new AtomicInteger();
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong retryAfters = new AtomicLong();
    private final TelegramTransport transport;
    private final KafkaProducer<String, DeliveryResult> producer;
    private final String resultsTopic;
    private final String instanceId;
    private volatile boolean running = true;

    /**
     * One bot: its waiting messages per chat, the chats with messages in turn order, and its pacing. The chats' FIFOs,
     * turn order and times, the calls in flight and answered, and {@code queued} are guarded by the bot's monitor;
     * {@code nextNanos} is written only by the sending thread that took the bot from the {@link DelayQueue} (so never
     * while the bot is in it); {@code blockedUntilNanos} by a thread that got a 429. No thread calls the DelayQueue
     * while holding a bot's monitor (the queue calls {@link #getDelay} under its own lock).
     *
     * <p>Pacing that holds whatever the delay between taking a call and its arrival at the provider (a call arrives
     * at FakeTelegram after it was taken and before its answer is read): at most {@code slots} calls of this process
     * per bot whose window is open, a call's window lasting from its take until {@link #WINDOW_NANOS} after its answer,
     * so two calls of one slot never arrive within one sliding second; and a chat's next call only
     * {@code chatIntervalNanos} after the answer of its last. Besides, calls are spaced {@code intervalNanos} apart.
     */
    private static final class Bot implements Delayed {
        /** A call holds its slot this long after its answer: the provider's sliding second and a 10 ms guard. */
        static final long WINDOW_NANOS = 1_010_000_000L;
        /** {@link #earliestNanos} when only an answer can allow the next call (the answering thread queues the bot). */
        static final long ON_ANSWER = Long.MAX_VALUE;
        final long intervalNanos;
        final long chatIntervalNanos;
        final int slots;
        final Map<String, ArrayDeque<OutboundMessage>> byChat = new HashMap<>();
        final ArrayDeque<String> turns = new ArrayDeque<>(); // chats with messages
        final Map<String, Long> chatNextNanos = new HashMap<>();
        final java.util.Set<String> chatsInFlight = new java.util.HashSet<>();
        final ArrayDeque<Long> answeredNanos = new ArrayDeque<>(); // answers of the last WINDOW_NANOS, oldest first
        int inFlight;
        int size;
        long earliestNanos;
        volatile long nextNanos = System.nanoTime();
        volatile long blockedUntilNanos = System.nanoTime();
        boolean queued; // in the DelayQueue, or taken by a sending thread that puts it back while it has messages

        Bot(long intervalNanos, long chatIntervalNanos, int slots) {
            this.intervalNanos = intervalNanos;
            this.chatIntervalNanos = chatIntervalNanos;
            this.slots = slots;
        }

        void add(OutboundMessage m, boolean first) {
            ArrayDeque<OutboundMessage> q = byChat.get(m.getChatId());
            if (q == null) {
                q = new ArrayDeque<>();
                byChat.put(m.getChatId(), q);
                if (first) {
                    turns.addFirst(m.getChatId());
                } else {
                    turns.addLast(m.getChatId());
                }
            }
            if (first) {
                q.addFirst(m);
            } else {
                q.addLast(m);
            }
            size++;
        }

        /**
         * The head of the next chat in turn whose pace allows a call now (its slot and its chat then held until
         * {@link #answered}); null if none, with {@code earliestNanos} the earliest time one may ({@link #ON_ANSWER}:
         * only an answer frees one).
         */
        OutboundMessage take(long now) {
            while (!answeredNanos.isEmpty() && now - answeredNanos.peekFirst() >= WINDOW_NANOS) {
                answeredNanos.pollFirst();
            }
            if (inFlight + answeredNanos.size() >= slots) {
                earliestNanos = answeredNanos.isEmpty() ? ON_ANSWER : answeredNanos.peekFirst() + WINDOW_NANOS;
                return null;
            }
            long earliest = ON_ANSWER;
            for (int i = turns.size(); i > 0; i--) {
                String chat = turns.pollFirst();
                if (chatsInFlight.contains(chat)) {
                    turns.addLast(chat);
                    continue;
                }
                long due = chatNextNanos.getOrDefault(chat, now);
                if (due - now > 0) {
                    turns.addLast(chat);
                    earliest = Math.min(earliest, due);
                    continue;
                }
                ArrayDeque<OutboundMessage> q = byChat.get(chat);
                OutboundMessage m = q.pollFirst();
                if (q.isEmpty()) {
                    byChat.remove(chat);
                } else {
                    turns.addLast(chat);
                }
                chatsInFlight.add(chat);
                inFlight++;
                size--;
                return m;
            }
            earliestNanos = earliest;
            return null;
        }

        /** The answer of a call to {@code chat} was read at {@code now}: its slot and its chat count from now. */
        void answered(String chat, long now) {
            inFlight--;
            answeredNanos.addLast(now);
            chatsInFlight.remove(chat);
            chatNextNanos.put(chat, now + chatIntervalNanos);
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(nextNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(nextNanos, ((Bot) o).nextNanos);
        }
    }

    private BareSender(SenderConfig config, double ratePerBot, long chatIntervalMs) {
        this.instanceId = config.instanceId();
        this.resultsTopic = config.topics().deliveryResults();
        this.transport = new TelegramTransport(config.telegramApiUrl(), config.bots(), config.connectTimeout(),
                config.requestTimeout(), config.budgetConfig().paidBroadcastBots());
        long interval = (long) (1e9 / ratePerBot);
        int slots = Math.max(1, (int) Math.floor(ratePerBot));
        config.bots().keySet().forEach(b -> bots.put(b, new Bot(interval, chatIntervalMs * 1_000_000L, slots)));
        SchemaRegistryClient registry = CachedSchemaRegistryClient.fromConfigs(config.schemaRegistryProperties());
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "sluice-bare-results-" + instanceId);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.putAll(config.kafkaProperties());
        this.producer = new KafkaProducer<>(p, new StringSerializer(),
                new SpecificAvroSerializer<DeliveryResult>(registry, false, config.schemaAutoRegister()));
    }

    /** {@code -D key=value} pairs as {@code sluice sender} takes them; tokens from {@code SLUICE_BOT_<ID>_TOKEN}. */
    public static void main(String[] args) throws Exception {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].equals("-D")) {
                throw new IllegalArgumentException("expected -D key=value, got " + args[i]);
            }
            int eq = args[i + 1].indexOf('=');
            values.put(args[i + 1].substring(0, eq), args[i + 1].substring(eq + 1));
        }
        double rate = Double.parseDouble(values.getOrDefault(RATE_KEY, "28"));
        values.remove(RATE_KEY);
        long chatIntervalMs = Long.parseLong(values.getOrDefault(CHAT_INTERVAL_KEY, "1000"));
        values.remove(CHAT_INTERVAL_KEY);
        AvroTrust.ensure();
        SenderConfig config = SenderConfig.from(Settings.of(values).withEnvironment(System.getenv()));
        new BareSender(config, rate, chatIntervalMs).run(config);
    }

    private void run(SenderConfig config) throws InterruptedException {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        c.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "sluice-bare-" + instanceId);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, config.maxPollRecords());
        c.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        c.putAll(config.kafkaProperties());
        SchemaRegistryClient registry = CachedSchemaRegistryClient.fromConfigs(config.schemaRegistryProperties());
        int bound = config.bufferMaxRecords();
        Thread[] senders = new Thread[config.maxInFlight()];
        for (int i = 0; i < senders.length; i++) {
            senders[i] = new Thread(this::sendLoop, "bare-sender-" + i);
            senders[i].setDaemon(true);
            senders[i].start();
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> running = false, "bare-stop"));
        try (KafkaConsumer<String, OutboundMessage> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                new SpecificAvroSerde<>(registry, OutboundMessage.class).deserializer())) {
            consumer.subscribe(List.of(config.topics().outboxLive()));
            System.out.println(READY_LINE + " (instance " + instanceId + ", " + senders.length + " sending threads)");
            long nextCommit = System.nanoTime();
            boolean paused = false;
            while (running) {
                for (ConsumerRecord<String, OutboundMessage> r : consumer.poll(Duration.ofMillis(100))) {
                    enqueue(r.value());
                }
                if (!paused && buffered.get() > bound) {
                    consumer.pause(consumer.assignment());
                    paused = true;
                } else if (paused && buffered.get() < bound / 2) {
                    consumer.resume(consumer.paused());
                    paused = false;
                }
                if (System.nanoTime() - nextCommit > 0) {
                    consumer.commitAsync();
                    nextCommit = System.nanoTime() + 1_000_000_000L;
                }
            }
        } finally {
            running = false;
            producer.close(Duration.ofSeconds(5));
            transport.close();
            System.out.println("sluice bare sender: stopped (" + delivered.get() + " delivered, " + retryAfters.get()
                    + " answered 429)");
        }
    }

    private void enqueue(OutboundMessage m) {
        Bot bot = bots.get(m.getBotId());
        if (bot == null) {
            return; // no token here: the real sender writes FAILED; not part of this workload
        }
        buffered.incrementAndGet();
        synchronized (bot) {
            bot.add(m, false);
            if (bot.queued) {
                return;
            }
            bot.queued = true;
        }
        due.add(bot);
    }

    private void sendLoop() {
        while (running) {
            Bot bot;
            try {
                bot = due.poll(200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (bot == null) {
                continue;
            }
            OutboundMessage m = null;
            boolean again;
            long now = System.nanoTime();
            synchronized (bot) {
                if (bot.blockedUntilNanos - now > 0) { // a 429's retry_after: wait it out, send nothing now
                    bot.nextNanos = bot.blockedUntilNanos;
                } else {
                    m = bot.take(now);
                    // spacing: one call per interval (a late thread may catch up by one interval, no more); when the
                    // window or no chat's pace allows a call, until the earliest time one may
                    bot.nextNanos = m != null ? Math.max(bot.nextNanos + bot.intervalNanos, now)
                            : bot.earliestNanos == Bot.ON_ANSWER ? now : Math.max(bot.earliestNanos, now + 1_000_000L);
                }
                // parked (not queued) when only an answer can allow its next call: the answering thread queues it
                again = bot.size > 0 && (m != null || bot.blockedUntilNanos - now > 0 || bot.earliestNanos != Bot.ON_ANSWER);
                bot.queued = again;
            }
            if (again) {
                due.add(bot);
            }
            if (m != null) {
                send(bot, m);
            }
        }
    }

    private void send(Bot bot, OutboundMessage m) {
        SendOutcome outcome = transport.send(m.getBotId(), m.getChatId(), m);
        boolean retry = outcome instanceof SendOutcome.RetryAfter;
        boolean add;
        synchronized (bot) {
            bot.answered(m.getChatId(), System.nanoTime());
            if (outcome instanceof SendOutcome.RetryAfter ra) {
                bot.add(m, true); // sent again (first of its chat) after the wait
                bot.blockedUntilNanos = System.nanoTime() + ra.retryAfter().toNanos();
            }
            add = !bot.queued && bot.size > 0;
            bot.queued |= add;
        }
        if (add) {
            due.add(bot);
        }
        if (retry) {
            retryAfters.incrementAndGet();
            return;
        }
        buffered.decrementAndGet();
        boolean ok = outcome instanceof SendOutcome.Delivered;
        if (ok) {
            delivered.incrementAndGet();
        }
        DeliveryResult r = DeliveryResult.newBuilder().setMessageId(m.getId()).setBotId(m.getBotId())
                .setChatId(m.getChatId()).setStatus(ok ? DeliveryStatus.DELIVERED : DeliveryStatus.FAILED)
                .setEventClass(m.getEventClass()).setLane(m.getLane()).setReason(ok ? null : outcome.toString())
                .setProviderMessageId(ok ? ((SendOutcome.Delivered) outcome).providerMessageId() : null)
                .setAttempts(1).setDueAt(m.getDueAt()).setSentAt(Instant.now()).setResultAt(Instant.now())
                .setDigestCount(m.getDigestCount()).setFoldedIds(List.copyOf(m.getFoldedIds()))
                .setSenderInstance(instanceId).setPart(m.getPart()).build();
        producer.send(new ProducerRecord<>(resultsTopic, r.getChatId(), r));
    }
}
