package dev.sluice.app.tools;

import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.Ports;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A broker reached only through a TCP proxy on 127.0.0.1, its advertised address ({@link #startBroker}): a test cuts
 * the way to it ({@link #cut()}: the clients keep the partition's leader they learnt, with no way to reach it, unlike a
 * broker stopped in order), or the proxy never forwards InitProducerId requests ({@link #withoutProducerIds()}: an
 * idempotent producer never gets its id). Requests are forwarded frame by frame (4-byte size, then the request, api key
 * first), answers as they come.
 */
final class KafkaProxy implements AutoCloseable {
    private static final short INIT_PRODUCER_ID = 22;
    private final int brokerPort = Ports.freePort();
    private final boolean dropProducerIds;
    private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger dropped = new AtomicInteger();
    /** Guarded by this: set by {@link #cut()}; a connection accepted meanwhile is closed, not forwarded. */
    private boolean isCut;

    /** Forwards everything until {@link #cut()}. */
    static KafkaProxy forwardingAll() throws IOException {
        return new KafkaProxy(false);
    }

    /** Forwards everything but InitProducerId requests, which it drops (counted: {@link #dropped()}). */
    static KafkaProxy withoutProducerIds() throws IOException {
        return new KafkaProxy(true);
    }

    private KafkaProxy(boolean dropProducerIds) throws IOException {
        this.dropProducerIds = dropProducerIds;
        daemon("proxy-accept", () -> {
            try {
                while (true) {
                    Socket client = server.accept();
                    Socket upstream = new Socket(InetAddress.getLoopbackAddress(), brokerPort);
                    synchronized (this) {
                        if (isCut) { // accepted while cut() ran: it closed the others before this one was listed
                            client.close();
                            upstream.close();
                            return;
                        }
                        sockets.add(client);
                        sockets.add(upstream);
                    }
                    daemon("proxy-requests", () -> requests(client, upstream));
                    daemon("proxy-answers", () -> {
                        try {
                            upstream.getInputStream().transferTo(client.getOutputStream());
                        } catch (IOException closed) {
                            // a side closed
                        }
                    });
                }
            } catch (IOException closed) {
                // cut() or close()
            }
        });
    }

    /** A broker behind this proxy, its data in {@code dir} (the caller closes it). */
    EmbeddedKafka startBroker(Path dir) {
        return EmbeddedKafka.startPersistent(dir, brokerPort, Map.of("advertised.listeners", "PLAINTEXT://" + bootstrap()));
    }

    /** The address clients bootstrap with. */
    String bootstrap() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** InitProducerId requests dropped so far. */
    int dropped() {
        return dropped.get();
    }

    private void requests(Socket client, Socket upstream) {
        try {
            DataInputStream in = new DataInputStream(client.getInputStream());
            DataOutputStream to = new DataOutputStream(upstream.getOutputStream());
            while (true) {
                int size = in.readInt();
                byte[] request = in.readNBytes(size);
                if (request.length < size) {
                    return;
                }
                short apiKey = (short) (((request[0] & 0xff) << 8) | (request[1] & 0xff));
                if (dropProducerIds && apiKey == INIT_PRODUCER_ID) {
                    dropped.incrementAndGet();
                    continue;
                }
                to.writeInt(size);
                to.write(request);
                to.flush();
            }
        } catch (IOException closed) {
            // a side closed
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    /** Closes every connection and refuses new ones. */
    synchronized void cut() throws IOException {
        isCut = true;
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }

    @Override
    public void close() throws IOException {
        cut();
    }
}
