package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every reader of a harness's CSV refuses a field that is not of its column's type, or a row short of fields,
 * naming the file, the line and the column — none passes over a row it cannot read.
 */
class CsvReadersTest
{
    private static void refused(final Path csv, final String where, final Executable read)
    {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, read);
        assertTrue(e.getMessage().startsWith(csv + where), "expected '" + csv + where + "...', got: " + e.getMessage());
    }

    @Test
    void mimallocBenchRuns(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("mimalloc-bench.csv");
        Files.write(csv, List.of("program,allocator,round,seconds,wall_s,cpu_s,peak_kib,time_is",
            "cfrac,glibc,1,1.0,1.0,0.5,2048,wall", "cfrac,pinarena,1,1.0,1.0,0.5,2.5k,wall"));
        refused(csv, ":3: column 'peak_kib'", () -> MimallocBenchRuns.read(csv));
    }

    @Test
    void pythonTestRuns(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("python-tests.csv");
        Files.write(csv, List.of("test,pythonmalloc,allocator,run,seconds,peak_kib,passed",
            "test_dict,malloc,glibc,one,2.0,409600,1"));
        refused(csv, ":2: column 'run'", () -> PythonTestRuns.read(csv));
    }

    @Test
    void mpiAppRuns(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("mpi-apps-host.csv");
        Files.write(csv, List.of("where,app,phase,metric,unit,better,round,allocator,value",
            "host,hpcc,HPL,HPL_time,s,lower,1,glibc,n/a"));
        refused(csv, ":2: column 'value'", () -> MpiAppRuns.read(List.of(csv)));
    }

    @Test
    void mallocRunsRefuseARowShortOfFields(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("malloc.csv");
        Files.write(csv, List.of("workload,allocator,run,seconds,peak_kib", "churn,glibc,1,0.07,9852", "churn,glibc,2,0.07"));
        refused(csv, ":3: expected 5 fields, got 4", () -> MallocRuns.read(csv));
    }

    @Test
    void mpiLoops(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("mpi-savings.csv");
        Files.write(csv, List.of(
            "transport,allocator,loop,size,iterations,registrations,deregistrations,addresses,seconds,bad_bytes",
            "ofi,glibc,churn,64k,5,0,0,1,0.0266,0"));
        refused(csv, ":2: column 'size'", () -> MpiLoops.read(csv));
    }

    @Test
    void jmhRuns(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("jmh.csv");
        Files.write(csv, List.of("benchmark,method,threads,size,fork,iteration,ns_per_op,alloc_bytes_per_op",
            "AllocateFreeBenchmark,allocateDirect,1,64,1,1,198.004,136.0117",
            "AllocateFreeBenchmark,allocateDirect,1,64,1,2,≈198,136.0117"));
        refused(csv, ":3: column 'ns_per_op'", () -> JmhRuns.read(csv));
    }

    @Test
    void costCurvesPassOverTheDevicePreambleAndUnmappedSizesButRefuseAShortRow(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("reg-cost-verbs.csv");
        final List<String> lines = List.of("device rxe0, GID index 1, QPs 17 <-> 18",
            "backend,backing,bytes,reps,min_us,median_us,max_us,us_per_mib",
            "verbs,4k,4096,3,242.9,292.8,3632.1,74954.24",
            "verbs,hugetlb-2m,4096,0,,,,could not map",
            "verbs,4k,16384,3,56.5");
        Files.write(csv, lines);
        refused(csv, ":5: expected 8 fields, got 5", () -> CostCurves.read(List.of(csv)));
        Files.write(csv, lines.subList(0, 4));
        assertEquals(1, CostCurves.read(List.of(csv)).points().size(), "the measured row, not the unmapped size");
        Files.write(csv, List.of("verbs,4k,4096,3,fast,292.8,3632.1,74954.24"));
        refused(csv, ":1: no header line 'backend,backing,", () -> CostCurves.read(List.of(csv)));
    }

    @Test
    void runTimeStepsRefuseAShortRowAndKeepCommasInAStepName(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("steps.csv");
        Files.write(csv, List.of("step,budget_s,seconds", "build (mvn, package),25,4", "report,3"));
        refused(csv, ":3: expected 3 fields, got 2", () -> RunTimeSection.read(dir));
        Files.write(csv, List.of("step,budget_s,seconds", "build (mvn, package),25,4", "report,0,three"));
        refused(csv, ":3: column 'seconds'", () -> RunTimeSection.read(dir));
    }

    @Test
    void runTimeCutsRefuseAShortRow(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("cuts.csv");
        Files.write(csv, List.of("jmh,BatchBenchmark,100 ms of warmup, in the suite's JVM", "malloc,big"));
        refused(csv, ":2: expected 3 fields, got 2", () -> RunTimeSection.read(dir));
    }
}
