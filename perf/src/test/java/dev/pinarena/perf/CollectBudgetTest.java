package dev.pinarena.perf;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code native/collect.sh}'s time budget, driven with a stand-in benchmark that sleeps: a workload whose
 * rounds do not fit its share of the budget stops after fewer rounds and says so, and never loses an
 * allocator (every workload keeps its first round under all five).
 */
class CollectBudgetTest
{
    private static final Set<String> ALLOCATORS = Set.of("glibc", "jemalloc", "mimalloc", "tcmalloc", "pinarena");

    @Test
    void roundsThatOverrunTheBudgetAreCutAndReportedButNoAllocatorIsDropped(@TempDir final Path dir) throws Exception
    {
        // 5 allocators x 0.2 s: a round takes >= 1 s; each of the two workloads gets 1 s of the 2 s budget.
        final Map<String, Set<Integer>> rounds = collect(dir, "0.2", 3, "2");
        for (final String workload : List.of("a", "b"))
        {
            assertEquals(Set.of(1), rounds.get(workload), workload + ": one round only, the first");
        }
        assertEquals(List.of("malloc,a,1 of 3 rounds", "malloc,b,1 of 3 rounds"), Files.readAllLines(dir.resolve("cuts.csv")));
    }

    @Test
    void withinTheBudgetEveryRoundRunsAndNothingIsCut(@TempDir final Path dir) throws Exception
    {
        final Map<String, Set<Integer>> rounds = collect(dir, "0", 3, "60");
        assertEquals(Set.of(1, 2, 3), rounds.get("a"));
        assertEquals(Set.of(1, 2, 3), rounds.get("b"));
        assertTrue(Files.notExists(dir.resolve("cuts.csv")), "no cut was made");
    }

    /** @return per workload, the rounds that ran under every allocator (a round missing one fails). */
    private static Map<String, Set<Integer>> collect(final Path dir, final String sleep, final int reps, final String budget)
        throws IOException, InterruptedException
    {
        final Path bench = dir.resolve("bench.sh");
        Files.writeString(bench, "#!/bin/sh\nsleep " + sleep + "; echo \"$1 " + sleep + " 100\"\n");
        Files.setPosixFilePermissions(bench, PosixFilePermissions.fromString("rwx------"));
        final Path out = dir.resolve("malloc.csv");
        // The shim's place is taken by mimalloc: the stand-in allocates nothing, any library will do.
        final ProcessBuilder builder = new ProcessBuilder("native/collect.sh", bench.toString(),
            "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2", Integer.toString(reps), out.toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("log.txt").toFile());
        builder.environment().put("WORKLOADS", "a b");
        builder.environment().put("BUDGET", budget);
        builder.environment().put("CUTS", dir.resolve("cuts.csv").toString());
        final Process process = builder.start();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "collect.sh finished within 60 s");
        assertEquals(0, process.exitValue(), () -> "collect.sh failed: " + read(dir.resolve("log.txt")));

        final Map<String, Map<Integer, Set<String>>> seen = new TreeMap<>();
        for (final String row : Files.readAllLines(out).subList(1, Files.readAllLines(out).size()))
        {
            final String[] field = row.split(",");
            seen.computeIfAbsent(field[0], w -> new TreeMap<>())
                .computeIfAbsent(Integer.parseInt(field[2]), r -> new TreeSet<>()).add(field[1]);
        }
        final Map<String, Set<Integer>> rounds = new TreeMap<>();
        seen.forEach((workload, byRound) -> byRound.forEach((round, allocators) ->
        {
            assertEquals(ALLOCATORS, allocators, workload + " round " + round + " ran under every allocator");
            rounds.computeIfAbsent(workload, w -> new TreeSet<>()).add(round);
        }));
        return rounds;
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.readString(file);
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
    }
}
