package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The MPI applications table: shim ÷ glibc in time terms (rates inverted), the per-round pair range as noise,
 * "slower" only when a sign test over at least five interleaved pairs says so, and the split into the hooks-off
 * settings' factor and the allocator's when glibc+settings was measured.
 */
class MpiAppsSectionTest
{
    private static final String HEADER = "where,app,phase,metric,unit,better,round,allocator,value";

    @Test
    void ratiosInTimeTermsWithPairRange(@TempDir final Path dir) throws Exception
    {
        final Path host = dir.resolve("host.csv");
        Files.write(host, List.of(HEADER,
            "host,hpcc,STREAM,StarSTREAM_Triad,GB/s,higher,1,glibc,40",
            "host,hpcc,STREAM,StarSTREAM_Triad,GB/s,higher,1,pinarena,20",
            "host,hpcc,HPL,HPL_time,s,lower,1,glibc,1.0",
            "host,hpcc,HPL,HPL_time,s,lower,1,pinarena,0.9",
            "host,hpcc,STREAM,StarSTREAM_Triad,GB/s,higher,2,pinarena,22",
            "host,hpcc,STREAM,StarSTREAM_Triad,GB/s,higher,2,glibc,55",
            "host,hpcc,HPL,HPL_time,s,lower,2,pinarena,1.2",
            "host,hpcc,HPL,HPL_time,s,lower,2,glibc,1.0"));
        final Path rxe = dir.resolve("rxe0.csv");
        Files.write(rxe, List.of(HEADER, "rxe0,netpipe,latency,latency_8B,us,lower,1,glibc,40"));
        final MpiAppRuns runs = MpiAppRuns.read(List.of(host, rxe, dir.resolve("absent.csv")));
        assertEquals(3, runs.metrics().size());
        final double[] pairs = {runs.find("host", "hpcc", "StarSTREAM_Triad").pairedTimeRatios().min(),
            runs.find("host", "hpcc", "StarSTREAM_Triad").pairedTimeRatios().max()};
        assertEquals(2.0, pairs[0], 1e-9);
        assertEquals(2.5, pairs[1], 1e-9);

        final StringBuilder md = new StringBuilder();
        new MpiAppsSection(runs).write(md, dir);
        final String text = md.toString();
        assertTrue(text.contains("| host | hpcc | STREAM | StarSTREAM_Triad (GB/s) | 47.50 | – | 21.00 | **2.25** | " +
            "2.00–2.50 | – | – | 2 | too few rounds to tell |"), text);
        assertTrue(text.contains("| host | hpcc | HPL | HPL_time (s) | 1.00 | – | 1.05 | **1.05** | 0.90–1.20 | – | – | 2 | " +
            "too few rounds to tell |"), text);
        assertTrue(text.contains("| rxe0 | netpipe | latency | latency_8B (us) | 40.00 | – | – | – | – | – | – | 0 | " +
            "not measured under both"), text);
    }

    @Test
    void threeConfigurationsSplitIntoSettingsAndAllocatorFactors(@TempDir final Path dir) throws Exception
    {
        final Path host = dir.resolve("host.csv");
        // per round, in time terms: settings ÷ glibc 1.11, 1.25, 1.00 (rates: glibc ÷ settings) and
        // shim ÷ settings 1.25, 1.00, 1.11; latency 2.0, 1.5, 1.0 and 1.5, 1.0, 1.2
        Files.write(host, List.of(HEADER,
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,1,glibc,100",
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,1,glibc+settings,90",
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,1,pinarena,72",
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,2,glibc+settings,80",
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,2,pinarena,80",
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,2,glibc,100",
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,3,pinarena,45",
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,3,glibc,50",
            "host,netpipe,bandwidth,bandwidth_65536B,Mbit/s,higher,3,glibc+settings,50",
            "host,netpipe,latency,latency_8B,us,lower,1,glibc,1",
            "host,netpipe,latency,latency_8B,us,lower,1,glibc+settings,2",
            "host,netpipe,latency,latency_8B,us,lower,1,pinarena,3",
            "host,netpipe,latency,latency_8B,us,lower,2,glibc+settings,1.5",
            "host,netpipe,latency,latency_8B,us,lower,2,pinarena,1.5",
            "host,netpipe,latency,latency_8B,us,lower,2,glibc,1",
            "host,netpipe,latency,latency_8B,us,lower,3,pinarena,2.4",
            "host,netpipe,latency,latency_8B,us,lower,3,glibc,2",
            "host,netpipe,latency,latency_8B,us,lower,3,glibc+settings,2"));
        final String text = table(host, dir);
        assertTrue(text.contains("| host | netpipe | bandwidth | bandwidth_65536B (Mbit/s) | 100 | 80.00 | 72.00 | " +
            "**1.25** | 1.11–1.39 | 1.11 | 1.11 | 3 | too few rounds to tell |"), text);
        assertTrue(text.contains("| host | netpipe | latency | latency_8B (us) | 1.00 | 2.00 | 2.40 | **1.50** | " +
            "1.20–3.00 | 1.50 | 1.20 | 3 | too few rounds to tell |"), text);
        assertTrue(text.contains("settings ÷ glibc | shim ÷ settings"), text);
        assertTrue(text.contains("the price of hooks off, paid by any launch"), text);
    }

    @Test
    void shimOverGlibcIsTheMedianOfPerRoundRatiosNotARatioOfMedians(@TempDir final Path dir) throws Exception
    {
        final Path host = dir.resolve("host.csv");
        // two states for every allocator (0.6 s or 1.3-1.6 s): glibc's median falls in the fast one, the shim's
        // in the slow one (1.26 / 0.62 = 2.03), though round by round the two are equal but for round 1
        final double[][] rounds = {{0.60, 1.56}, {0.61, 0.60}, {1.57, 1.26}, {1.42, 1.50}, {1.49, 1.41},
            {0.61, 0.62}, {0.62, 0.62}};
        final List<String> rows = new java.util.ArrayList<>(List.of(HEADER));
        for (int r = 0; r < rounds.length; r++)
        {
            rows.add("host,netpipe,all,wall,s,lower," + (r + 1) + ",glibc," + rounds[r][0]);
            rows.add("host,netpipe,all,wall,s,lower," + (r + 1) + ",pinarena," + rounds[r][1]);
        }
        Files.write(host, rows);
        final String text = table(host, dir);
        assertTrue(text.contains("| host | netpipe | all | wall (s) | 0.620 | – | 1.26 | **1.00** | 0.80–2.60 | – | – | " +
            "7 | within noise |"), text);
    }

    @Test
    void aZeroMedianGivesNoRatio(@TempDir final Path dir) throws Exception
    {
        final Path host = dir.resolve("host.csv");
        Files.write(host, List.of(HEADER,
            "host,hpcc,SingleDGEMM,SingleDGEMM_wall,s,lower,1,glibc,0",
            "host,hpcc,SingleDGEMM,SingleDGEMM_wall,s,lower,1,pinarena,0",
            "host,hpcc,SingleDGEMM,SingleDGEMM_wall,s,lower,2,glibc,1",
            "host,hpcc,SingleDGEMM,SingleDGEMM_wall,s,lower,2,pinarena,1",
            "host,hpcc,SingleDGEMM,SingleDGEMM_wall,s,lower,3,glibc,0",
            "host,hpcc,SingleDGEMM,SingleDGEMM_wall,s,lower,3,pinarena,0"));
        final String text = table(host, dir);
        assertTrue(text.contains("| host | hpcc | SingleDGEMM | SingleDGEMM_wall (s) | 0 | – | 0 | – | 1.00–1.00 | – | – | " +
            "1 | a median is 0 (hpcc's section clock has 1 s steps) |"), text);
        assertFalse(text.contains("NaN"), text);
    }

    /** The section as written from one results file. */
    private static String table(final Path csv, final Path dir) throws Exception
    {
        final StringBuilder md = new StringBuilder();
        new MpiAppsSection(MpiAppRuns.read(List.of(csv))).write(md, dir);
        return md.toString();
    }

    @Test
    void verdictIsASignTestOverAtLeastFiveRounds()
    {
        // three of three slower happens 1 time in 8 by chance: no verdict, however large the ratios
        assertEquals("too few rounds to tell", MpiAppsSection.verdict(new Samples(1.5, 1.6, 1.1)));
        assertEquals("too few rounds to tell", MpiAppsSection.verdict(new Samples(1.5, 1.6, 1.1, 1.2)));
        assertEquals("slower", MpiAppsSection.verdict(new Samples(1.5, 1.6, 1.1, 1.01, 1.02)));
        assertEquals("faster", MpiAppsSection.verdict(new Samples(0.9, 0.95, 0.8, 0.99, 0.7)));
        assertEquals("within noise", MpiAppsSection.verdict(new Samples(0.9, 1.1, 1.2, 1.3, 1.4)));
        // 6 of 7 above: p = 8/128 = 0.0625; 7 of 8: 9/256 = 0.035
        assertEquals("within noise", MpiAppsSection.verdict(new Samples(0.9, 1.1, 1.2, 1.3, 1.4, 1.1, 1.2)));
        assertEquals("slower", MpiAppsSection.verdict(new Samples(0.9, 1.1, 1.2, 1.3, 1.4, 1.1, 1.2, 1.05)));
        // pairs of exactly 1.0 (hpcc's 1 s section clock) say nothing either way: 3 of 3 left
        assertEquals("within noise", MpiAppsSection.verdict(new Samples(1.0, 1.0, 1.2, 1.3, 1.1)));
    }

    @Test
    void saysHowManyVerdictsNoiseAloneWouldGive(@TempDir final Path dir) throws Exception
    {
        // three metrics over five rounds: HPL 5 of 5 slower, FFT mixed, latency 5 of 5 faster; a fourth with two
        // rounds has no verdict and is not counted. Noise: 3 rows × 2/32 = 0.1875
        final Path csv = dir.resolve("rxe0.csv");
        final List<String> rows = new java.util.ArrayList<>(List.of(HEADER));
        final double[] fft = {1.1, 0.9, 1.2, 0.8, 1.05};
        for (int r = 1; r <= 5; r++)
        {
            rows.add("rxe0,hpcc,HPL,HPL_time,s,lower," + r + ",glibc,1.0");
            rows.add("rxe0,hpcc,HPL,HPL_time,s,lower," + r + ",pinarena,1.1");
            rows.add("rxe0,hpcc,FFT,FFT_time,s,lower," + r + ",glibc,1.0");
            rows.add("rxe0,hpcc,FFT,FFT_time,s,lower," + r + ",pinarena," + fft[r - 1]);
            rows.add("rxe0,hpcc,latency,lat,us,lower," + r + ",glibc,10");
            rows.add("rxe0,hpcc,latency,lat,us,lower," + r + ",pinarena,9");
        }
        rows.add("rxe0,netpipe,all,wall,s,lower,1,glibc,1.0");
        rows.add("rxe0,netpipe,all,wall,s,lower,1,pinarena,1.5");
        rows.add("rxe0,netpipe,all,wall,s,lower,2,glibc,1.0");
        rows.add("rxe0,netpipe,all,wall,s,lower,2,pinarena,1.5");
        Files.write(csv, rows);
        final StringBuilder md = new StringBuilder();
        new MpiAppsSection(MpiAppRuns.read(List.of(csv))).write(md, dir);
        final String text = md.toString();
        assertTrue(text.contains("| slower |") && text.contains("| faster |"), text);
        assertTrue(text.contains("2 of the 3 rows with enough rounds got a verdict; noise alone would give about 0.2"),
            text);
    }

    @Test
    void malformedRowNamesFileAndLine(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("bad.csv");
        Files.write(csv, List.of(HEADER, "host,hpcc,HPL,HPL_time,s,sideways,1,glibc,1.0"));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> MpiAppRuns.read(List.of(csv)));
        assertTrue(e.getMessage().contains("bad.csv:2"), e.getMessage());
    }

    @Test
    void missingResultsSayNotMeasured(@TempDir final Path dir) throws Exception
    {
        final StringBuilder md = new StringBuilder();
        new MpiAppsSection(MpiAppRuns.read(List.of(dir.resolve("absent.csv")))).write(md, dir);
        assertTrue(md.toString().contains("Not measured in this run"), md.toString());
    }
}
