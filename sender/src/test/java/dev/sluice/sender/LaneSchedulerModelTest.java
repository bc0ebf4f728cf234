package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link LaneScheduler} against a model written for clarity, not speed (every choice a scan over all lanes for the least
 * {@code (readyAt, order of enqueueing)}), under long random sequences of every operation the dispatcher, the poll thread
 * and the sending threads make: adds (urgent or not, of three bots, some heads served first), hand-outs (any lane or one
 * bot's), reschedules into the past, present and future, completions, partition drops, time running on. Every answer
 * must be the model's: which head, the next wake-up time, the buffered and lane counts.
 */
class LaneSchedulerModelTest {
    /** A message: its own properties decide urgency, advancing, group and served-first (as PendingMessage's do). */
    record Msg(int id, boolean urgent, boolean mayAdvance, String bot, boolean servedFirst) {
    }

    private static final TopicPartition P0 = new TopicPartition("outbox.live", 0);
    private static final TopicPartition P1 = new TopicPartition("outbox.live", 1);

    /** The model: the contract of the class comment, by linear scans. */
    private static final class Model {
        static final class Lane {
            final LaneKey key;
            final ArrayDeque<Msg> queue = new ArrayDeque<>();
            long readyAt;
            long seq;
            boolean busy;
            boolean first;
            int urgent;

            Lane(LaneKey key) {
                this.key = key;
            }

            boolean servedWithUrgent() {
                return urgent > 0 || first;
            }
        }

        final Map<LaneKey, Lane> lanes = new LinkedHashMap<>();
        long nextSeq;

        void enqueue(Lane lane, long at) {
            lane.readyAt = at;
            lane.seq = nextSeq++;
            lane.first = lane.queue.peekFirst().servedFirst();
            lane.busy = false;
        }

        void add(LaneKey key, Msg m, long now) {
            Lane lane = lanes.get(key);
            if (lane == null) {
                lane = new Lane(key);
                lanes.put(key, lane);
                lane.queue.add(m);
                lane.urgent = m.urgent() ? 1 : 0;
                enqueue(lane, now);
            } else {
                lane.queue.add(m);
                if (m.urgent() && lane.urgent++ == 0 && !lane.busy) {
                    // lifted: it keeps a limit's wait but not a pacing turn, and goes behind the lanes of its readyAt
                    if (lane.readyAt > now && lane.queue.peekFirst().mayAdvance()) {
                        lane.readyAt = now;
                    }
                    lane.seq = nextSeq++;
                }
            }
        }

        private Lane least(java.util.function.Predicate<Lane> which) {
            Lane best = null;
            for (Lane l : lanes.values()) {
                if (!l.busy && which.test(l) && (best == null || l.readyAt < best.readyAt
                        || l.readyAt == best.readyAt && l.seq < best.seq)) {
                    best = l;
                }
            }
            return best;
        }

        Lane pollReady(long now) {
            Lane u = least(Lane::servedWithUrgent);
            Lane o = least(l -> !l.servedWithUrgent());
            Lane lane = u != null && u.readyAt <= now ? u : o != null && o.readyAt <= now ? o : null;
            if (lane != null) {
                lane.busy = true;
            }
            return lane;
        }

        Lane pollReadyOf(String bot, long now) {
            Lane lane = least(l -> !l.first && bot.equals(l.queue.peekFirst().bot()));
            if (lane == null || lane.readyAt > now) {
                return null;
            }
            lane.busy = true;
            return lane;
        }

        long nextReadyAtMs() {
            return lanes.values().stream().filter(l -> !l.busy).mapToLong(l -> l.readyAt).min().orElse(Long.MAX_VALUE);
        }

        void complete(Lane lane, long now) {
            Msg done = lane.queue.pollFirst();
            if (done.urgent()) {
                lane.urgent--;
            }
            if (lane.queue.isEmpty()) {
                lanes.remove(lane.key);
            } else {
                enqueue(lane, now);
            }
        }

        int buffered() {
            return lanes.values().stream().mapToInt(l -> l.queue.size()).sum();
        }
    }

    private record Out(LaneScheduler.Head<Msg> head, Model.Lane lane) {
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void every_answer_is_the_models_over_a_long_random_run(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        LaneScheduler<Msg> s = new LaneScheduler<>(Msg::urgent, Msg::mayAdvance, Msg::bot, Msg::servedFirst);
        Model model = new Model();
        List<Out> out = new ArrayList<>();
        String[] bots = {"b0", "b1", "b2"};
        long now = 0;
        int ids = 0;
        int handedOut = 0;
        for (int step = 0; step < 20_000; step++) {
            int op = random.nextInt(100);
            if (op < 35) {
                LaneKey key = new LaneKey(random.nextBoolean() ? P0 : P1, "c" + random.nextInt(40));
                Msg m = new Msg(ids++, random.nextInt(10) == 0, random.nextBoolean(), bots[random.nextInt(bots.length)],
                        random.nextInt(12) == 0);
                s.add(key, m, now);
                model.add(key, m, now);
            } else if (op < 55) {
                LaneScheduler.Head<Msg> h = s.pollReady(now);
                Model.Lane l = model.pollReady(now);
                assertThat(h == null ? null : h.message()).as("step %d: pollReady(%d)", step, now)
                        .isEqualTo(l == null ? null : l.queue.peekFirst());
                if (h != null) {
                    assertThat(s.isUrgent(h)).as("step %d", step).isEqualTo(l.urgent > 0);
                    out.add(new Out(h, l));
                    handedOut++;
                }
            } else if (op < 65) {
                String bot = bots[random.nextInt(bots.length)];
                LaneScheduler.Head<Msg> h = s.pollReadyOf(bot, now);
                Model.Lane l = model.pollReadyOf(bot, now);
                assertThat(h == null ? null : h.message()).as("step %d: pollReadyOf(%s, %d)", step, bot, now)
                        .isEqualTo(l == null ? null : l.queue.peekFirst());
                if (h != null) {
                    out.add(new Out(h, l));
                    handedOut++;
                }
            } else if (op < 75 && !out.isEmpty()) {
                Out o = out.remove(random.nextInt(out.size()));
                long at = now + random.nextInt(-5, 50);
                s.reschedule(o.head(), at);
                if (model.lanes.get(o.lane().key) == o.lane()) {
                    model.enqueue(o.lane(), at);
                }
            } else if (op < 90 && !out.isEmpty()) {
                Out o = out.remove(random.nextInt(out.size()));
                s.complete(o.head(), now);
                if (model.lanes.get(o.lane().key) == o.lane()) {
                    model.complete(o.lane(), now);
                }
            } else if (op < 91) {
                TopicPartition tp = random.nextBoolean() ? P0 : P1;
                List<Msg> dropped = s.dropPartition(tp);
                List<Msg> expected = new ArrayList<>();
                model.lanes.values().removeIf(l -> {
                    if (l.key.partition().equals(tp)) {
                        expected.addAll(l.queue);
                        return true;
                    }
                    return false;
                });
                assertThat(dropped).as("step %d: dropped", step).containsExactlyInAnyOrderElementsOf(expected);
            } else {
                now += random.nextInt(0, 20);
            }
            assertThat(s.nextReadyAtMs()).as("step %d: next ready at", step).isEqualTo(model.nextReadyAtMs());
            assertThat(s.buffered()).as("step %d: buffered", step).isEqualTo(model.buffered());
            assertThat(s.laneCount()).as("step %d: lanes", step).isEqualTo(model.lanes.size());
        }
        assertThat(handedOut).as("the run exercised hand-outs").isGreaterThan(2_000);
    }
}
