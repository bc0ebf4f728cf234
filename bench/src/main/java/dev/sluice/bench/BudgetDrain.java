package dev.sluice.bench;

import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.budget.RedisGcraBudget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code budget-vs-bucket4j}'s drain (split out of {@link BudgetVsBucket4j}, unchanged): round trips per delivered
 * message when a backlog over many chats is drained through the batched decision, against one decision per call.
 *
 * <p>Single-threaded: one driver thread per call; nothing is kept between calls.
 */
final class BudgetDrain {
    private BudgetDrain() {
    }

    static final String DRAIN_DESCRIPTION = "drain: 200 chats x 3 messages of one bot, global 300/s, chat 10/s burst 3"
            + " (Telegram's shape at 10x speed), one driver thread that waits out bot-wide refusals (like the sender's pacer);"
            + " batch = up to 16 ready chats per EVALSHA, baseline = one EVALSHA per candidate";

    record Drain(long roundTrips, long delivered, long overAdmitted) {
        double perDelivered() {
            return roundTrips / (double) delivered;
        }
    }

    /**
     * Drains a backlog like the sender's ready queue: chats ordered by ready time; up to {@code batch} ready
     * chats are asked for in one call; a granted chat's next message is ready at once, a refused chat is
     * rescheduled at the returned wait. No provider calls: only the budget's round trips are counted.
     */
    static Drain drain(String url, int batch, int globalBurst) {
        int chats = 200;
        int perChat = 3;
        double rate = 300;
        BudgetLimits limits = new BudgetLimits(rate, globalBurst, 10, 3);
        String bot = "drain-" + UUID.randomUUID().toString().substring(0, 8);
        record Ready(long atNanos, String chat, int left) {
        }
        try (RedisGcraBudget budget = new RedisGcraBudget(url, BudgetConfig.of(limits), Duration.ofSeconds(5))) {
            PriorityQueue<Ready> queue = new PriorityQueue<>((a, b) -> Long.compare(a.atNanos, b.atNanos));
            long t0 = System.nanoTime();
            for (int c = 0; c < chats; c++) {
                queue.add(new Ready(t0, Integer.toString(100_000 + c), perChat));
            }
            long before = budget.redisRoundTrips();
            long delivered = 0;
            long firstCall = -1;
            long lastGrant = 0;
            // like the sender's pacer: after a refusal by a bot-wide limit the whole bot waits, not each chat
            long botNotBefore = 0;
            while (!queue.isEmpty()) {
                long wait = Math.max(queue.peek().atNanos, botNotBefore) - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                long now = System.nanoTime();
                if (firstCall < 0) {
                    firstCall = now;
                }
                List<Ready> picked = new ArrayList<>();
                while (picked.size() < batch && !queue.isEmpty() && queue.peek().atNanos <= now) {
                    picked.add(queue.poll());
                }
                List<BudgetRequest> requests = new ArrayList<>(picked.size());
                for (Ready r : picked) {
                    requests.add(BudgetRequest.live(bot, r.chat));
                }
                List<Decision> decisions = batch == 1 ? List.of(budget.tryAcquire(requests.get(0)))
                        : budget.tryAcquireAll(bot, requests);
                long after = System.nanoTime();
                for (int i = 0; i < picked.size(); i++) {
                    Ready r = picked.get(i);
                    Decision d = decisions.get(i);
                    if (d.granted()) {
                        delivered++;
                        lastGrant = after;
                        if (r.left > 1) {
                            queue.add(new Ready(after, r.chat, r.left - 1));
                        }
                    } else {
                        long at = after + d.retryIn().toNanos();
                        if (d.limit() == Limit.GLOBAL || d.limit() == Limit.GATE_BOT || d.limit() == Limit.HEADROOM) {
                            botNotBefore = Math.max(botNotBefore, at);
                        }
                        queue.add(new Ready(at, r.chat, r.left));
                    }
                }
            }
            long trips = budget.redisRoundTrips() - before;
            double seconds = (lastGrant - firstCall) / 1e9;
            long over = Math.max(0, delivered - (long) Math.floor(globalBurst + rate * seconds));
            return new Drain(trips, delivered, over);
        }
    }
}
