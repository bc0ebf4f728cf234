package dev.sluice.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What the sent marks a run left in one redis-server cost: {@code SCAN MATCH sluice:*:sent:*} over the whole
 * keyspace, then, pipelined, {@code GET} of each key (to tell a {@code SENT|…} mark from a {@code DONE|…} one), then
 * {@code MEMORY USAGE <key> SAMPLES 0} of every SENT mark and of up to {@code sampleMax} DONE marks.
 * {@code MEMORY USAGE} counts the key,
 * its value and the main dictionary entry, not the expiry entry (every mark has a TTL): {@link #usedMemory(String, int)} beside the
 * mark count gives the whole. A plain socket and RESP, like {@link RedisProbe}; single-threaded, one call at a time.
 */
public final class MarkMemory {
    /** Per form, of the sampled keys: marks, of them measured, MEMORY USAGE bytes summed, key characters summed. */
    public record Form(long count, long sampled, long bytes, long keyChars) {
        double bytesPerMark() {
            return sampled == 0 ? 0 : (double) bytes / sampled;
        }

        double keyCharsPerMark() {
            return sampled == 0 ? 0 : (double) keyChars / sampled;
        }
    }

    /** The marks of one server: SENT and DONE forms (of the sampled keys), every mark, all keys, {@code used_memory}. */
    public record Marks(Form sent, Form done, long marks, long dbsize, long usedMemory) {
    }

    private MarkMemory() {
    }

    public static Marks measure(String host, int port, int sampleMax) throws IOException {
        try (Socket s = new Socket(host, port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            InputStream in = new BufferedInputStream(s.getInputStream(), 1 << 16);
            long[] sent = new long[4];
            long[] done = new long[4];
            long marks = 0;
            String cursor = "0";
            do {
                send(out, "SCAN", cursor, "MATCH", "sluice:*:sent:*", "COUNT", "1000");
                List<?> page = (List<?>) read(in);
                cursor = (String) page.get(0);
                List<?> keys = (List<?>) page.get(1);
                marks += keys.size();
                for (Object k : keys) {
                    send(out, "GET", (String) k);
                }
                List<String> toSample = new ArrayList<>();
                List<long[]> forms = new ArrayList<>();
                long doneChosen = 0;
                for (Object k : keys) {
                    Object value = read(in);
                    if (value == null) {
                        continue; // expired meanwhile
                    }
                    long[] form = ((String) value).startsWith("SENT|") ? sent : done;
                    form[0]++;
                    if (form == sent || done[1] + doneChosen < sampleMax) { // every SENT mark, DONE ones sampled
                        toSample.add((String) k);
                        forms.add(form);
                        doneChosen += form == done ? 1 : 0;
                    }
                }
                for (String k : toSample) {
                    send(out, "MEMORY", "USAGE", k, "SAMPLES", "0");
                }
                for (int i = 0; i < toSample.size(); i++) {
                    Object usage = read(in);
                    if (usage == null) {
                        continue;
                    }
                    long[] form = forms.get(i);
                    form[1]++;
                    form[2] += (Long) usage;
                    form[3] += toSample.get(i).length();
                }
            } while (!cursor.equals("0"));
            send(out, "DBSIZE");
            long dbsize = (Long) read(in);
            send(out, "INFO", "memory");
            long used = 0;
            for (String line : ((String) read(in)).split("\r\n")) {
                if (line.startsWith("used_memory:")) {
                    used = Long.parseLong(line.substring("used_memory:".length()));
                }
            }
            return new Marks(new Form(sent[0], sent[1], sent[2], sent[3]), new Form(done[0], done[1], done[2], done[3]),
                    marks, dbsize, used);
        }
    }

    /** {@code used_memory} of one server now. */
    public static long usedMemory(String host, int port) throws IOException {
        return Long.parseLong(new RedisProbe(host, port).info("memory").get("used_memory"));
    }

    private static void send(OutputStream out, String... args) throws IOException {
        StringBuilder sb = new StringBuilder().append('*').append(args.length).append("\r\n");
        for (String a : args) {
            byte[] b = a.getBytes(StandardCharsets.UTF_8);
            sb.append('$').append(b.length).append("\r\n").append(a).append("\r\n");
        }
        out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new IOException("redis error: " + line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                byte[] b = in.readNBytes(n);
                line(in);
                return new String(b, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                List<Object> out = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    out.add(read(in));
                }
                return out;
            }
            default:
                throw new IOException("unexpected RESP type " + type);
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            sb.append((char) c);
        }
        in.read(); // \n
        return sb.toString();
    }
}
