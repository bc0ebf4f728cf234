package dev.sluice.bench;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.RedisGcraBudget;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The flood baseline: how a sender without classes is usually written. One FIFO of every event in arrival
 * order, no folding; before each send it asks the same shared budget (Sluice's Redis script, the same
 * limits) and, when refused, waits at the head of the queue (head-of-line blocking); a 429 is waited out
 * at the head too. One thread, as a FIFO implies. It records, per event, arrival → provider acceptance.
 */
public final class NaiveFifoSender implements AutoCloseable {
    private static final Pattern RETRY_AFTER = Pattern.compile("\"retry_after\"\\s*:\\s*(\\d+)");

    /** An event, when it arrived, and (after sending) when the provider accepted it. */
    public record Sent(Notification notification, long arrivedAtMillis, long acceptedAtMillis) {
        public long latencyMillis() {
            return acceptedAtMillis - arrivedAtMillis;
        }
    }

    private record Queued(Notification notification, long arrivedAtMillis) {
    }

    private final LinkedBlockingQueue<Queued> fifo = new LinkedBlockingQueue<>();
    private final RedisGcraBudget budget;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String sendUrl;
    private final List<Sent> sent = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile RuntimeException failure;

    /**
     * @param apiUrl FakeTelegram's {@code http://host:port/bot}; the token is appended here only
     * @param limits the same limits Sluice's senders use
     */
    public NaiveFifoSender(String redisUrl, BudgetLimits limits, String apiUrl, String token) {
        this.budget = new RedisGcraBudget(redisUrl, limits, Duration.ofSeconds(2));
        this.sendUrl = apiUrl + token + "/sendMessage";
        this.thread = new Thread(this::loop, "naive-fifo-sender");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Appends an event to the FIFO, arrived now. */
    public void offer(Notification n) {
        fifo.add(new Queued(n, System.currentTimeMillis()));
    }

    public synchronized int sentCount() {
        return sent.size();
    }

    public synchronized List<Sent> sent() {
        return List.copyOf(sent);
    }

    private void loop() {
        try {
            while (running) {
                Queued head = fifo.poll(200, TimeUnit.MILLISECONDS);
                if (head == null) {
                    continue;
                }
                long accepted = deliver(head.notification());
                if (accepted > 0) {
                    synchronized (this) {
                        sent.add(new Sent(head.notification(), head.arrivedAtMillis(), accepted));
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    /** Sends the head until the provider accepts it; returns the acceptance time (0 when stopped). */
    private long deliver(Notification n) throws InterruptedException {
        while (running) {
            Decision d = budget.tryAcquire(n.getBotId(), n.getChatId());
            if (!d.granted()) {
                Thread.sleep(Math.max(1, d.retryIn().toMillis())); // head-of-line: the whole FIFO waits
                continue;
            }
            String form = "chat_id=" + URLEncoder.encode(n.getChatId(), StandardCharsets.UTF_8)
                    + "&text=" + URLEncoder.encode(n.getText(), StandardCharsets.UTF_8);
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(sendUrl)).timeout(Duration.ofSeconds(10))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return System.currentTimeMillis();
                }
                if (r.statusCode() == 429) {
                    Matcher m = RETRY_AFTER.matcher(r.body());
                    Thread.sleep(1000L * (m.find() ? Long.parseLong(m.group(1)) : 1));
                } else {
                    Thread.sleep(500);
                }
            } catch (java.io.IOException e) {
                Thread.sleep(500);
            }
        }
        return 0;
    }

    /** Nearest-rank p99 of the critical events' arrival → acceptance, ms; -1 if none was sent. */
    public static long criticalP99(List<Sent> sent) {
        List<Long> l = sent.stream().filter(s -> s.notification().getEventClass() == NotificationClass.CRITICAL)
                .map(Sent::latencyMillis).sorted().toList();
        return l.isEmpty() ? -1 : l.get(Math.max(0, (int) Math.ceil(0.99 * l.size()) - 1));
    }

    public void throwIfFailed() {
        if (failure != null) {
            throw new IllegalStateException("naive sender failed: " + failure.getMessage(), failure);
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(5000);
        budget.close();
    }
}
