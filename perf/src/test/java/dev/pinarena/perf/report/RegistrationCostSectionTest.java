package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The registration cost table: µs/MiB per page backing (4 KiB, THP, 2 MiB hugetlb) from the loopback tool's CSV,
 * a THP chunk the kernel did not back with huge pages kept out of the THP column, and the published anchors cited.
 */
class RegistrationCostSectionTest
{
    @Test
    void thpColumnBesideFourKiBAndHugetlbWithAnchors(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("reg-cost-verbs.csv");
        Files.write(csv, List.of("backend,backing,bytes,reps,min_us,median_us,max_us,us_per_mib",
            "verbs,4k,4194304,3,400.0,500.0,600.0,125.00",
            "verbs,thp,4194304,3,150.0,200.0,250.0,50.00",
            "verbs,hugetlb-2M,4194304,3,90.0,100.0,110.0,25.00",
            "verbs,4k,16777216,3,1800.0,2000.0,2200.0,125.00",
            "verbs,thp-partial,16777216,3,1000.0,1200.0,1300.0,75.00",
            "verbs,hugetlb-2M,16777216,3,300.0,400.0,500.0,25.00"));
        final StringBuilder md = new StringBuilder();
        new RegistrationCostSection(CostCurves.read(List.of(csv))).write(md, dir);
        final String text = md.toString();
        assertTrue(text.contains("| 4 MiB | 400 / 500 / 600 | 150 / 200 / 250 | 90 / 100 / 110 | 5.00× | 125.0 | 50.0 | 25.0 |"),
            text);
        assertTrue(text.contains("| 16 MiB | 1800 / 2000 / 2200 | — | 300 / 400 / 500 | 5.00× | 125.0 | — | 25.0 |"),
            text);
        assertFalse(text.contains("1000 / 1200 / 1300"), "a partial THP chunk is not shown as THP: " + text);
        for (final String anchor : RegistrationCostSection.ANCHORS)
        {
            assertTrue(text.contains(anchor), "anchor cited: " + anchor);
            assertTrue(anchor.contains("https://"), "anchor names its source: " + anchor);
        }
    }
}
