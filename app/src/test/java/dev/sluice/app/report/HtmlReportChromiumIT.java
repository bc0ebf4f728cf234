package dev.sluice.app.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.HostBinaries;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Renders the sample report in headless Chromium (Debian package {@code chromium}) and checks the
 * screenshot shows the charts: the blue send bars and the red dashed limit line are drawn. Skipped,
 * with the reason, where no Chromium is installed.
 */
class HtmlReportChromiumIT {

    @Test
    void rendersInHeadlessChromiumWithTheLimitLine(@TempDir Path dir) throws Exception {
        Path chromium = HostBinaries.find("chromium", Path.of("/usr/bin/chromium")).orElse(null);
        Assumptions.assumeTrue(chromium != null, HostBinaries.missing("chromium",
                "this test renders the HTML report in it; install the Debian package 'chromium'"));
        Path html = dir.resolve("report.html");
        Path png = dir.resolve("report.png");
        HtmlReportTest.sample().write(html);
        Process p = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update", "--no-first-run",
                "--hide-scrollbars", "--window-size=1200,1300", "--user-data-dir=" + dir.resolve("profile"),
                "--screenshot=" + png, html.toUri().toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("chromium.log").toFile()).start();
        boolean done = p.waitFor(60, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        assertThat(done).as("chromium finished within 60 s; log: " + dir.resolve("chromium.log")).isTrue();
        assertThat(png).as("chromium log:\n" + Files.readString(dir.resolve("chromium.log"))).exists();
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isEqualTo(1200);
        assertThat(count(img, 0x3b7dd8)).as("blue send bars").isGreaterThan(10_000);
        assertThat(count(img, 0xd64545)).as("red limit line and the over-limit bar").isGreaterThan(500);
        assertThat(count(img, 0x3ba55c)).as("green DELIVERED bar").isGreaterThan(1_000);
        if (System.getProperty("sluice.report.screenshot") != null) {
            Files.copy(png, Path.of(System.getProperty("sluice.report.screenshot")), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static int count(BufferedImage img, int rgb) {
        int n = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int c = img.getRGB(x, y) & 0xffffff;
                if (Math.abs((c >> 16) - (rgb >> 16)) < 12 && Math.abs(((c >> 8) & 0xff) - ((rgb >> 8) & 0xff)) < 12
                        && Math.abs((c & 0xff) - (rgb & 0xff)) < 12) {
                    n++;
                }
            }
        }
        return n;
    }
}
