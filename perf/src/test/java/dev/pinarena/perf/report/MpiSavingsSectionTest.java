package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The MPI savings table: counts and ratios come from the CSV rows as written by
 * {@code bindings-c/tests/mpi/run.sh savings}, and a missing CSV is reported as not measured.
 */
class MpiSavingsSectionTest
{
    private static final String HEADER =
        "transport,allocator,loop,size,iterations,registrations,deregistrations,addresses,seconds,bad_bytes";

    @Test
    void tableCountsAndRatiosPerLoop(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("mpi-savings.csv");
        Files.write(csv, List.of(HEADER,
            "ofi,glibc,churn,4194304,20,2,2,2,6.2,0",
            "ofi,glibc-fixed,churn,4194304,20,20,20,1,12.0,0",
            "ofi,pinarena,churn,4194304,20,2,0,1,6.0,0",
            "ofi,glibc,reuse,65536,20,0,0,1,0.1,0",
            "ofi,glibc-fixed,reuse,65536,20,0,0,1,0.1,0",
            "ofi,pinarena,reuse,65536,20,0,0,1,0.1,0"));
        final MpiLoops loops = MpiLoops.read(csv);
        assertEquals(6, loops.rows().size());
        assertEquals(20, loops.find("glibc-fixed", "churn", 4194304).registrations());

        final StringBuilder md = new StringBuilder();
        new MpiSavingsSection(loops).write(md, dir);
        final String text = md.toString();
        assertTrue(text.contains("| churn | 4 MiB | 20 | 2 / 2 | 20 / 20 | 2 / 0 | 10.0 | 2.00 |"), text);
        assertTrue(text.contains("| reuse | 64 KiB | 20 | 0 / 0 | 0 / 0 | 0 / 0 | – (0 and 0) | 1.00 |"), text);
        assertTrue(Files.size(dir.resolve("mpi-registrations.png")) > 1000, "chart written");
    }

    @Test
    void missingResultsSayNotMeasured(@TempDir final Path dir) throws Exception
    {
        final StringBuilder md = new StringBuilder();
        new MpiSavingsSection(MpiLoops.read(dir.resolve("absent.csv"))).write(md, dir);
        assertTrue(md.toString().contains("Not measured in this run"), md.toString());
    }
}
