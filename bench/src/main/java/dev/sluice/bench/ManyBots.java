package dev.sluice.bench;

import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.FakeTelegram;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Issue 7, scenario {@code many-bots}: 200 bots, each with a backlog of a minute at its 30 msg/s (60 chats per
 * bot) in {@code outbox.live}, drained by 3 sender processes sharing one Redis. After a warm-up it measures,
 * over a window: messages FakeTelegram accepted per second (all bots), sender CPU per delivered message (the
 * children's user+system CPU from the OS), redis-server CPU per delivered message (INFO cpu), and, in a
 * MONITOR sample after the window, Redis round trips per delivered message (client commands, script-internal
 * calls excluded). Everything (broker, Redis, FakeTelegram, senders) shares this machine's cores.
 */
public final class ManyBots {
    private ManyBots() {
    }

    public static int run(String[] argv) throws Exception {
        BenchArgs args = BenchArgs.parse(argv);
        int bots = args.scaled("bots", 200, 2);
        int seconds = args.scaled("seconds", 60, 5);
        int warmup = args.scaled("warmup-seconds", 15, 3);
        int sample = args.scaled("monitor-seconds", 10, 2);
        int senders = args.integer("senders", 3);
        int perBot = args.integer("backlog-per-bot", 30 * (warmup + seconds + sample + 10));
        int chatsPerBot = args.integer("chats-per-bot", 60);
        try (Infra infra = Infra.start(FakeTelegram.Limits.telegram())) {
            List<String> botIds = new ArrayList<>();
            for (int b = 0; b < bots; b++) {
                botIds.add("mb" + b);
            }
            Map<String, String> tokens = Workload.tokens(botIds);
            Infra.say("producing %d bots x %d messages (%d chats per bot)", bots, perBot, chatsPerBot);
            try (KafkaProducer<String, OutboundMessage> producer = new KafkaProducer<>(infra.producerProps(), new StringSerializer(),
                    new SpecificAvroSerde<>(infra.client, OutboundMessage.class).serializer())) {
                Instant now = Instant.now();
                for (int k = 0; k < perBot; k++) {
                    for (int b = 0; b < bots; b++) {
                        String chat = Long.toString(10_000_000L + b * 1_000L + k % chatsPerBot);
                        producer.send(new ProducerRecord<>(infra.topics.outboxLive(), chat, OutboundMessage.newBuilder()
                                .setId("mb-" + b + "-" + k).setBotId(botIds.get(b)).setChatId(chat).setKind("bench.many")
                                .setEventClass(NotificationClass.ROUTINE).setText("[mb] " + b + "/" + k).setCreatedAt(now).setDueAt(now)
                                .build()));
                    }
                }
                producer.flush();
            }
            Map<String, String> settings = infra.senderSettings(infra.telegram.apiUrl());
            settings.put("budget.chat.burst", "2");
            RedisProbe redis = new RedisProbe(infra.redis.host(), infra.redis.port());
            try (Senders s = Senders.start("many", senders, settings, tokens, infra.workDir, "512m")) {
                Thread.sleep(warmup * 1000L); // warm-up: JIT, partition assignment, every bot's lanes filled
                long accepted0 = infra.telegram.accepted().size();
                long cpu0 = s.cpu().toMillis();
                double redisCpu0 = redis.cpuSeconds();
                long evalsha0 = redis.calls("evalsha") + redis.calls("eval");
                long t0 = System.nanoTime();
                Thread.sleep(seconds * 1000L); // the measured window
                long accepted1 = infra.telegram.accepted().size();
                long cpu1 = s.cpu().toMillis();
                double redisCpu1 = redis.cpuSeconds();
                long evalsha1 = redis.calls("evalsha") + redis.calls("eval");
                double window = (System.nanoTime() - t0) / 1e9;
                RedisProbe.MonitorSample m = redis.monitor(sample * 1000L);
                long inSample = infra.telegram.accepted().stream().filter(a -> a.acceptedAtMillis() >= m.startMillis()
                        && a.acceptedAtMillis() < m.startMillis() + m.millis()).count();
                long delivered = accepted1 - accepted0;
                double perS = delivered / window;
                double cpuMsPerMsg = delivered == 0 ? 0 : (double) (cpu1 - cpu0) / delivered;
                double redisUsPerMsg = delivered == 0 ? 0 : (redisCpu1 - redisCpu0) * 1e6 / delivered;
                double roundTrips = inSample == 0 ? 0 : (double) m.clientCommands() / inSample;
                double evalPerMsg = delivered == 0 ? 0 : (double) (evalsha1 - evalsha0) / delivered;
                long p429 = infra.telegram.rejected429Count();

                BenchResult out = new BenchResult("many-bots", "bots", "delivered/s", "offered (bots x 30/s)", "sender CPU ms/msg",
                        "sender CPU cores busy", "Redis round trips/msg", "budget EVALSHA/msg", "redis-server CPU us/msg", "provider 429");
                out.row(bots, perS, bots * 30, cpuMsPerMsg, (cpu1 - cpu0) / 1000.0 / window, roundTrips, evalPerMsg, redisUsPerMsg, p429);
                out.put("bots", bots)
                        .put("delivered_per_s", Utilisation.round(perS))
                        .put("cpu_ms_per_msg", Utilisation.round(cpuMsPerMsg))
                        .put("redis_round_trips_per_msg", Utilisation.round(roundTrips));
                out.note("%d sender JVMs (-Xmx512m, defaults: sender.max.in.flight=16, 8 per bot), %d s warm-up, %d s window, %d s MONITOR sample"
                                + " (%d client commands, %d script-internal calls, %d messages accepted in it)",
                        senders, warmup, seconds, sample, m.clientCommands(), m.scriptCalls(), inSample);
                out.note("redis-server CPU per message: INFO used_cpu_user+used_cpu_sys over the window / messages accepted in it");
                out.emit(args);
                return delivered > 0 ? 0 : 2;
            }
        }
    }
}
