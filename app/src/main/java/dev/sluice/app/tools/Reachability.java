package dev.sluice.app.tools;

import dev.sluice.config.Settings;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Checks, before a tool starts its work, that Kafka and the schema registry answer, so a wrong address fails in
 * about {@link #TIMEOUT} with one line naming it instead of a minute of client warnings. Kafka: a TCP connect to
 * each {@code bootstrap.servers} address (no client, no log lines), then one Admin {@code describeCluster} and
 * {@code listTopics} with the same client properties (security settings included) bounded by what is left of the
 * timeout. Registry: one {@code GET /subjects} per URL; any HTTP answer counts as reachable. Stateless.
 */
public final class Reachability {
    /** How long a tool waits for Kafka or the registry before it gives up: a person is waiting. */
    public static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** How long one registry URL may take to answer {@code GET /subjects}: an idle registry answers in milliseconds. */
    public static final Duration REGISTRY_TIMEOUT = Duration.ofSeconds(5);
    /** How long closing the check's Admin client may wait for its pending calls before it aborts them. */
    private static final Duration CLOSE_BOUND = Duration.ofSeconds(1);

    private Reachability() {
    }

    /**
     * @param clientProps the tool's Kafka client properties ({@code bootstrap.servers} and any pass-through)
     * @param topics topics the tool needs; each must exist
     * @throws ToolException naming the address (or the missing topic) when Kafka does not answer within {@code timeout}
     */
    public static void kafka(Map<String, Object> clientProps, Collection<String> topics, Duration timeout) {
        String bootstrap = String.valueOf(clientProps.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG));
        long deadline = System.nanoTime() + timeout.toNanos();
        tcp(bootstrap, timeout);
        Map<String, Object> admin = adminProps(clientProps, remaining(deadline));
        Admin client = Admin.create(admin);
        try {
            client.describeCluster().nodes().get(remaining(deadline).toMillis(), TimeUnit.MILLISECONDS);
            Set<String> existing = client.listTopics().names().get(remaining(deadline).toMillis(), TimeUnit.MILLISECONDS);
            Set<String> missing = new TreeSet<>(topics);
            missing.removeAll(existing);
            if (!missing.isEmpty()) {
                throw new ToolException("topic" + (missing.size() > 1 ? "s " : " ") + String.join(", ", missing)
                        + " not found on Kafka at " + bootstrap + " (bootstrap.servers)");
            }
        } catch (TimeoutException e) {
            throw new ToolException("Kafka at " + bootstrap + " (bootstrap.servers) accepts connections but did not answer within "
                    + timeout.toSeconds() + " s; check the security settings (kafka.security.protocol, kafka.sasl.*)", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new ToolException("Kafka at " + bootstrap + " (bootstrap.servers) refused the request: "
                    + cause.getClass().getSimpleName() + ": " + cause.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ToolException("interrupted while checking Kafka at " + bootstrap, e);
        } finally {
            // close() alone waits without a bound for calls still pending against a broker that never answers
            client.close(CLOSE_BOUND);
        }
    }

    /** The schema registry answers HTTP at one of its URLs within {@code timeout}. */
    public static void registry(Settings s, Duration timeout) {
        // validates the key (a ConfigException names it); urls() come without user info
        List<String> urls = CachedSchemaRegistryClient.fromSettings(s).urls();
        List<String> tried = new ArrayList<>();
        HttpClient http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
        String lastProblem = "";
        for (String url : urls) {
            String shown = url;
            tried.add(shown);
            try {
                URI subjects = URI.create(url.replaceAll("/+$", "") + "/subjects");
                HttpResponse<Void> answer = http.send(HttpRequest.newBuilder(subjects).timeout(timeout).GET().build(),
                        HttpResponse.BodyHandlers.discarding());
                if (answer.statusCode() < 500) {
                    return;
                }
                lastProblem = "HTTP " + answer.statusCode();
            } catch (IOException e) {
                lastProblem = describe(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ToolException("interrupted while checking the schema registry at " + shown, e);
            }
        }
        throw new ToolException("cannot reach the schema registry at " + String.join(", ", tried)
                + " (schema.registry.url) within " + timeout.toSeconds() + " s: " + lastProblem);
    }

    private static void tcp(String bootstrap, Duration timeout) {
        List<String> problems = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        for (String address : bootstrap.split(",")) {
            String a = address.trim();
            int colon = a.lastIndexOf(':');
            if (colon <= 0) {
                throw Settings.invalid(KafkaClients.BOOTSTRAP_SERVERS, bootstrap, "host:port[,host:port...]");
            }
            String host = a.substring(0, colon).replace("[", "").replace("]", "");
            int port;
            try {
                port = Integer.parseInt(a.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw Settings.invalid(KafkaClients.BOOTSTRAP_SERVERS, bootstrap, "host:port[,host:port...]");
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(host, port), (int) Math.max(1, remaining(deadline).toMillis()));
                return; // one broker answering is enough: the client learns the rest from it
            } catch (IOException e) {
                problems.add(describe(e));
            }
        }
        throw new ToolException("cannot reach Kafka at " + bootstrap + " (bootstrap.servers) within " + timeout.toSeconds()
                + " s: " + String.join("; ", problems));
    }

    private static Map<String, Object> adminProps(Map<String, Object> clientProps, Duration timeout) {
        Map<String, Object> p = new java.util.TreeMap<>();
        Set<String> known = AdminClientConfig.configNames();
        clientProps.forEach((k, v) -> {
            if (known.contains(k) || k.startsWith("sasl.") || k.startsWith("ssl.")) {
                p.put(k, v);
            }
        });
        int ms = (int) Math.max(1000, timeout.toMillis());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
        p.put(AdminClientConfig.RETRIES_CONFIG, 0);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, clientProps.getOrDefault(CommonClientConfigs.CLIENT_ID_CONFIG, "sluice-tool") + "-check");
        return p;
    }

    private static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadlineNanos - System.nanoTime()));
    }

    private static String describe(IOException e) {
        if (e instanceof ConnectException) {
            return "connection refused";
        }
        if (e instanceof SocketTimeoutException || e instanceof java.net.http.HttpTimeoutException) {
            return "no answer (timed out)";
        }
        if (e instanceof UnknownHostException) {
            return "unknown host " + e.getMessage();
        }
        return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
    }
}
