package dev.sluice.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RateTest {

    @Test
    void parsesTheUsualForms() {
        assertThat(Rate.parse("5/h")).isEqualTo(new Rate(5, 3_600_000));
        assertThat(Rate.parse("30/s")).isEqualTo(new Rate(30, 1_000));
        assertThat(Rate.parse("20/min")).isEqualTo(new Rate(20, 60_000));
        assertThat(Rate.parse("1/s")).isEqualTo(Rate.perSecond(1));
        assertThat(Rate.parse("100/10s")).isEqualTo(new Rate(100, 10_000));
        assertThat(Rate.parse("1000/d")).isEqualTo(new Rate(1000, 86_400_000));
        assertThat(Rate.parse("5/h").toString()).isEqualTo("5/h");
        assertThat(Rate.parse("100/10s").toString()).isEqualTo("100/10s");
        assertThat(Rate.parse(Rate.parse("20/min").toString())).isEqualTo(Rate.perMinute(20));
    }

    @Test
    void errorsNameTheBadValue() {
        for (String bad : new String[] {"5", "5/", "/h", "x/h", "5/fortnight", "0/s", "-3/s", "5/0s", "5/h/2"}) {
            assertThatThrownBy(() -> Rate.parse(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("rate")
                    .hasMessageContaining(bad);
        }
    }

    @Test
    void dividedAmongReplicasIsExact() {
        Rate shared = Rate.perSecond(30).dividedBy(4);
        assertThat(shared).isEqualTo(new Rate(30, 4_000));
        assertThat(shared.eventsIn(4_000)).isEqualTo(30);
    }

    @Test
    void durationsParseAndFormat() {
        assertThat(Durations.parseMillis("1h", "window")).isEqualTo(3_600_000);
        assertThat(Durations.parseMillis("90s", "window")).isEqualTo(90_000);
        assertThat(Durations.parseMillis("PT6H", "window")).isEqualTo(21_600_000);
        assertThat(Durations.format(21_600_000)).isEqualTo("6h");
        assertThatThrownBy(() -> Durations.parseMillis("1 fortnight", "window"))
                .hasMessageContaining("window").hasMessageContaining("fortnight");
    }
}
