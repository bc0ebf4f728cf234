package dev.sluice.app.demo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The demo's subscribers: seeded, so two runs with the same seed produce the same notifications.
 * Private chats have positive ids, groups negative ids (Telegram's convention), and a few private
 * chats have blocked the bot (FakeTelegram answers them 403).
 *
 * @param subscriptions every (chat, feed) pair
 * @param blockedChats  chats that blocked the bot
 */
public record Audience(List<Subscription> subscriptions, List<String> blockedChats) {

    /** What a chat follows: all quakes of one region, or every quake at or above a magnitude. */
    public sealed interface Feed permits RegionFeed, MagnitudeFeed {
        boolean matches(Quake q);
    }

    /** Quakes of one region at or above a magnitude. */
    public record RegionFeed(String region, double minMagnitude) implements Feed {
        public boolean matches(Quake q) {
            return q.region().equals(region) && q.magnitude() >= minMagnitude;
        }
    }

    public record MagnitudeFeed(double minMagnitude) implements Feed {
        public boolean matches(Quake q) {
            return q.magnitude() >= minMagnitude;
        }
    }

    public record Subscription(String chatId, Feed feed) {
    }

    /**
     * Builds the audience for a catalogue.
     *
     * @param privateChats   number of private chats (each follows one feed)
     * @param busiestFollowers private chats that follow the quakes of the busiest region at or above
     *                       {@code busiestMinMagnitude}
     * @param bigQuakeFollowers private chats that follow every quake of at least {@code bigMagnitude}
     * @param groups         group chats; they follow big quakes only (20 messages/min per group)
     * @param blocked        private chats that blocked the bot; they follow big quakes
     */
    public static Audience generate(List<Quake> quakes, long seed, int privateChats, int busiestFollowers,
                                    double busiestMinMagnitude, int bigQuakeFollowers, double bigMagnitude,
                                    int groups, int blocked) {
        if (busiestFollowers + bigQuakeFollowers > privateChats) {
            throw new IllegalArgumentException("busiest followers (" + busiestFollowers + ") + big-quake followers ("
                    + bigQuakeFollowers + ") exceed private chats (" + privateChats + ")");
        }
        Map<String, Long> perRegion = quakes.stream().collect(Collectors.groupingBy(Quake::region, Collectors.counting()));
        List<String> regions = perRegion.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey).toList();
        if (regions.isEmpty()) {
            throw new IllegalArgumentException("the catalogue has no quakes");
        }
        Random random = new Random(seed);
        List<Subscription> subs = new ArrayList<>();
        Feed busiest = new RegionFeed(regions.get(0), busiestMinMagnitude);
        Feed big = new MagnitudeFeed(bigMagnitude);
        List<String> quieter = regions.size() > 1 ? regions.subList(1, regions.size()) : regions;
        for (int i = 0; i < privateChats; i++) {
            String chat = Long.toString(100_000_001L + i);
            Feed feed;
            if (i < busiestFollowers) {
                feed = busiest;
            } else if (i < busiestFollowers + bigQuakeFollowers) {
                feed = big;
            } else {
                feed = new RegionFeed(quieter.get(random.nextInt(quieter.size())), 0);
            }
            subs.add(new Subscription(chat, feed));
        }
        for (int g = 0; g < groups; g++) {
            subs.add(new Subscription(Long.toString(-1_000_000_001L - g), big));
        }
        List<String> blockedChats = new ArrayList<>();
        for (int b = 0; b < blocked; b++) {
            String chat = Long.toString(900_000_001L + b);
            blockedChats.add(chat);
            subs.add(new Subscription(chat, big));
        }
        return new Audience(List.copyOf(subs), List.copyOf(blockedChats));
    }

    /**
     * The demo's audience: about a seventh of the private chats follow every quake of the busiest region
     * (the Kamchatka sequence: 187 events, most of them aftershocks that fold into digests), about two
     * fifths follow every M6+ quake worldwide, the rest one quieter region each; groups and blocked
     * chats follow M6+.
     */
    public static Audience demo(List<Quake> quakes, long seed, int privateChats, int groups, int blocked) {
        int busiest = privateChats * 2 / 15;
        int big = privateChats * 2 / 5;
        return generate(quakes, seed, privateChats, busiest, 0, big, 6.0, groups, blocked);
    }

    /** Chats following a quake, in a stable order. */
    public List<String> followersOf(Quake q) {
        return subscriptions.stream().filter(s -> s.feed().matches(q)).map(Subscription::chatId).distinct()
                .sorted(Comparator.comparing(Function.identity())).toList();
    }
}
