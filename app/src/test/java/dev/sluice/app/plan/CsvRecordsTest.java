package dev.sluice.app.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.util.List;
import org.junit.jupiter.api.Test;

class CsvRecordsTest {

    @Test
    void quotedFieldsMayHoldCommasQuotesAndLineBreaks() throws Exception {
        String csv = "time_utc_iso,magnitude,place,id\r\n"
                + "2025-07-29T23:05:21.056Z,5.2,\"9 km SE of Comapa, Guatemala\",us6000qw5x\r\n"
                + "2025-07-29T23:24:52.483Z,8.8,\"the \"\"big\"\" one,\nKamchatka\",us6000qw60\n"
                + "\n"
                + "2025-07-30T00:00:00Z,,,";
        List<CsvRecords.Row> rows = CsvRecords.read(new StringReader(csv));
        assertThat(rows).hasSize(4);
        assertThat(rows.get(1).fields()).containsExactly("2025-07-29T23:05:21.056Z", "5.2",
                "9 km SE of Comapa, Guatemala", "us6000qw5x");
        assertThat(rows.get(2).fields().get(2)).isEqualTo("the \"big\" one,\nKamchatka");
        assertThat(rows.get(2).line()).isEqualTo(3);
        assertThat(rows.get(3).line()).isEqualTo(6);
        assertThat(rows.get(3).fields()).containsExactly("2025-07-30T00:00:00Z", "", "", "");
    }

    @Test
    void anUnclosedQuoteNamesItsLine() {
        assertThatThrownBy(() -> CsvRecords.read(new StringReader("a,b\n1,\"open\n")))
                .hasMessageContaining("line 2");
        assertThatThrownBy(() -> CsvRecords.read(new StringReader("a,b\n1,\"x\"y\n")))
                .hasMessageContaining("line 2");
    }
}
