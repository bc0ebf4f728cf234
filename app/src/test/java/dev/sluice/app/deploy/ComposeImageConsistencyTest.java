package dev.sluice.app.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * A static check that {@code docker-compose.yml} and the {@code Dockerfile} agree, without Docker: every writable
 * volume of a Sluice service is mounted on a directory the image creates and gives to the user it runs as
 * (Docker initialises a new named volume with the image directory's owner; a directory the image lacks becomes a
 * root-owned mount point the non-root process cannot write), the topology's {@code state.dir} is on such a
 * volume, and Prometheus sends its alerts to the Alertmanager service, whose routes name defined receivers.
 * Variants of the real files show the check fails where they disagree.
 */
class ComposeImageConsistencyTest {
    private static Path root;
    private static String dockerfile;
    private static Map<String, Object> compose;

    @BeforeAll
    static void load() throws IOException {
        root = Path.of("").toAbsolutePath();
        while (root != null && !Files.exists(root.resolve("docker-compose.yml"))) {
            root = root.getParent();
        }
        assertThat(root).as("docker-compose.yml above " + Path.of("").toAbsolutePath()).isNotNull();
        dockerfile = Files.readString(root.resolve("Dockerfile"));
        compose = yaml(Files.readString(root.resolve("docker-compose.yml")));
    }

    @Test
    void everyWritableVolumeOfASluiceServiceIsADirectoryTheImageGivesItsUser() {
        assertThat(problems(dockerfile, compose)).isEmpty();
        Image image = Image.parse(dockerfile);
        assertThat(image.user).isEqualTo("sluice");
        assertThat(image.ownerOf("/var/lib/sluice/streams")).isEqualTo("sluice");
    }

    @Test
    void theCheckFailsWhereImageAndComposeDisagree() throws IOException {
        // The image before the fix: no state directory, so the named volume's mount point is root's.
        String withoutStateDir = dockerfile.replace(" && mkdir -p /var/lib/sluice/streams \\\n", "")
                .replace(" && chown -R sluice:sluice /var/lib/sluice\n", "\n");
        assertThat(withoutStateDir).isNotEqualTo(dockerfile);
        assertThat(problems(withoutStateDir, compose)).anySatisfy(p -> assertThat(p).contains("topology", "/var/lib/sluice/streams"));

        // State on a path the image does not have, and state.dir off the volume.
        String moved = Files.readString(root.resolve("docker-compose.yml"))
                .replace("topology-state:/var/lib/sluice/streams", "topology-state:/data/streams");
        assertThat(problems(dockerfile, yaml(moved))).anySatisfy(p -> assertThat(p).contains("/data/streams"))
                .anySatisfy(p -> assertThat(p).contains("SLUICE_STATE_DIR"));

        // An image that runs as root is not what compose was written for either.
        assertThat(problems(dockerfile.replace("USER sluice", "USER root"), compose)).anySatisfy(p -> assertThat(p).contains("root"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void prometheusSendsAlertsToTheAlertmanagerServiceWhoseRoutesNameDefinedReceivers() throws IOException {
        Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) compose.get("services");
        Map<String, Object> alertmanager = services.get("alertmanager");
        assertThat(alertmanager).as("an alertmanager service").isNotNull();
        assertThat((String) alertmanager.get("image")).startsWith("prom/alertmanager:");
        assertThat((List<String>) alertmanager.get("volumes"))
                .contains("./deploy/alertmanager/alertmanager.yml:/etc/alertmanager/alertmanager.yml:ro");
        assertThat(alertmanager.get("command").toString()).contains("--config.file=/etc/alertmanager/alertmanager.yml");

        Map<String, Object> prometheus = yaml(Files.readString(root.resolve("deploy/prometheus/prometheus.yml")));
        List<Map<String, Object>> managers = (List<Map<String, Object>>) ((Map<String, Object>) prometheus.get("alerting")).get("alertmanagers");
        List<String> targets = new ArrayList<>();
        managers.forEach(m -> ((List<Map<String, Object>>) m.get("static_configs")).forEach(c -> targets.addAll((List<String>) c.get("targets"))));
        assertThat(targets).containsExactly("alertmanager:9093");
        assertThat(services.get("prometheus").get("depends_on").toString()).contains("alertmanager");

        Map<String, Object> am = yaml(Files.readString(root.resolve("deploy/alertmanager/alertmanager.yml")));
        List<String> receivers = ((List<Map<String, Object>>) am.get("receivers")).stream().map(r -> (String) r.get("name")).toList();
        List<String> routed = new ArrayList<>();
        collectReceivers((Map<String, Object>) am.get("route"), routed);
        assertThat(routed).isNotEmpty();
        assertThat(receivers).containsAll(routed);
    }

    @SuppressWarnings("unchecked")
    private static void collectReceivers(Map<String, Object> route, List<String> out) {
        if (route.get("receiver") != null) {
            out.add((String) route.get("receiver"));
        }
        for (Map<String, Object> child : (List<Map<String, Object>>) route.getOrDefault("routes", List.of())) {
            collectReceivers(child, out);
        }
    }

    /** What disagrees between {@code dockerfileText} and {@code composeFile}; empty when they agree. */
    @SuppressWarnings("unchecked")
    static List<String> problems(String dockerfileText, Map<String, Object> composeFile) {
        Image image = Image.parse(dockerfileText);
        List<String> problems = new ArrayList<>();
        if (image.user == null || image.user.equals("root") || image.user.equals("0")) {
            problems.add("the image runs as " + (image.user == null ? "root (no USER)" : image.user) + ": compose expects a non-root user");
        }
        Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) composeFile.get("services");
        services.forEach((name, service) -> {
            boolean sluiceImage = "sluice:local".equals(service.get("image")) || service.containsKey("build");
            if (!sluiceImage) {
                return;
            }
            List<String> writable = new ArrayList<>();
            for (Object volume : (List<Object>) service.getOrDefault("volumes", List.of())) {
                String[] parts = volume.toString().split(":");
                if (parts.length < 2 || (parts.length > 2 && parts[2].contains("ro"))) {
                    continue;
                }
                writable.add(parts[1]);
                String owner = image.ownerOf(parts[1]);
                if (owner == null) {
                    problems.add(name + ": volume " + volume + " is mounted on " + parts[1]
                            + ", which the image does not create: Docker makes a root-owned mount point there");
                } else if (!owner.equals(image.user)) {
                    problems.add(name + ": volume " + volume + " is mounted on " + parts[1] + ", owned by " + owner
                            + " in the image, but the image runs as " + image.user);
                }
            }
            Map<String, Object> env = (Map<String, Object>) service.getOrDefault("environment", Map.of());
            Object stateDir = env.get("SLUICE_STATE_DIR");
            List<?> command = (List<?>) service.get("command");
            boolean topology = command != null && !command.isEmpty() && "topology".equals(command.get(0));
            if (topology && (stateDir == null || !writable.contains(stateDir.toString()))) {
                problems.add(name + ": SLUICE_STATE_DIR=" + stateDir + " is not on a writable volume " + writable
                        + ": the state stores would be lost with the container");
            }
        });
        return problems;
    }

    /**
     * The runtime stage of a Dockerfile (after its last {@code FROM}): the user it runs as, and the owner of every
     * directory its {@code RUN} lines create ({@code useradd --home-dir D --create-home U}, {@code mkdir [-p] D},
     * {@code chown [-R] U[:G] D}), in order.
     */
    static final class Image {
        final Map<String, String> ownerByDir = new LinkedHashMap<>();
        String user;

        private static final Pattern USERADD = Pattern.compile("useradd\\s+(.*?)\\s+(\\S+)\\s*$");
        private static final Pattern HOME = Pattern.compile("--home-dir\\s+(\\S+)");

        static Image parse(String dockerfileText) {
            String text = dockerfileText.replace("\\\n", " ");
            List<String> lines = text.lines().toList();
            int lastFrom = 0;
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).trim().startsWith("FROM ")) {
                    lastFrom = i;
                }
            }
            Image image = new Image();
            for (String line : lines.subList(lastFrom, lines.size())) {
                String l = line.trim();
                if (l.startsWith("USER ")) {
                    image.user = l.substring(5).trim().split(":")[0];
                } else if (l.startsWith("RUN ")) {
                    for (String command : l.substring(4).split("&&|;")) {
                        image.apply(command.trim().split("\\s+"), command.trim());
                    }
                }
            }
            return image;
        }

        private void apply(String[] words, String command) {
            switch (words[0]) {
                case "useradd" -> {
                    Matcher m = USERADD.matcher(command);
                    Matcher home = HOME.matcher(command);
                    if (m.find() && home.find() && command.contains("--create-home")) {
                        ownerByDir.put(home.group(1), m.group(2));
                    }
                }
                case "mkdir" -> {
                    for (int i = 1; i < words.length; i++) {
                        if (!words[i].startsWith("-")) {
                            ownerByDir.put(words[i], "root");
                        }
                    }
                }
                case "chown" -> {
                    boolean recursive = false;
                    String owner = null;
                    for (int i = 1; i < words.length; i++) {
                        if (words[i].equals("-R")) {
                            recursive = true;
                        } else if (owner == null) {
                            owner = words[i].split(":")[0];
                        } else {
                            String dir = words[i];
                            String newOwner = owner;
                            boolean r = recursive;
                            ownerByDir.replaceAll((d, o) -> d.equals(dir) || (r && d.startsWith(dir + "/")) ? newOwner : o);
                            ownerByDir.putIfAbsent(dir, owner);
                        }
                    }
                }
                default -> {
                    // other commands create no directory this check relies on
                }
            }
        }

        /** The owner of {@code dir} in the image, or null when the image does not create it. */
        String ownerOf(String dir) {
            return ownerByDir.get(dir.endsWith("/") ? dir.substring(0, dir.length() - 1) : dir);
        }
    }

    private static Map<String, Object> yaml(String text) {
        return new Yaml().load(text);
    }
}
