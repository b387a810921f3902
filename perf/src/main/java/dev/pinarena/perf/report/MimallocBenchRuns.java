package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The runs of mimalloc-bench's programs ({@code perf/mimalloc-bench/run.sh}):
 * {@code program,allocator,round,seconds,wall_s,cpu_s,peak_kib,time_is}, one row per run; every round runs each
 * program once under each allocator, so runs of one round lie close together in time.
 */
public final class MimallocBenchRuns
{
    /**
     * One run.
     *
     * @param program   the program (cfrac, larson, ...).
     * @param allocator {@code glibc}, {@code mimalloc} or {@code pinarena}.
     * @param round     the round, from 1.
     * @param seconds   the run's time, as {@code timeIs} says.
     * @param wall      wall seconds.
     * @param cpu       user + system seconds.
     * @param peakKib   largest resident set + largest HugetlbPages, KiB.
     * @param timeIs    {@code wall} (a fixed amount of work: seconds is its wall time), {@code per_work} (a
     *                  fixed-duration program: the time per fixed work it printed) or {@code per_cpu} (the CPU time
     *                  per fixed work it printed).
     */
    public record Run(String program, String allocator, int round, double seconds, double wall, double cpu,
        long peakKib, String timeIs)
    {
        /**
         * @return CPU seconds (user + system) per the fixed work {@link #seconds()} stands for: the CPU time of a
         *         fixed-work program; for a fixed-duration one its time per work scaled by the share of the run it
         *         had the CPUs ({@code seconds × cpu / wall}); the printed figure when it is per CPU already. On a
         *         shared machine a fixed-duration program's throughput falls with the CPU it gets; this does not.
         */
        public double cpuPerWork()
        {
            return switch (timeIs)
            {
                case "per_cpu" -> seconds;
                case "per_work" -> wall > 0 ? seconds * cpu / wall : cpu;
                default -> cpu;
            };
        }
    }

    private final Map<String, List<Run>> byProgram = new LinkedHashMap<>();

    private MimallocBenchRuns()
    {
    }

    /**
     * @param file the CSV; a missing file gives no runs.
     * @return the runs.
     * @throws IOException if the file cannot be read.
     * @throws CsvFormatException for a row that is not of the format, naming the file, line and column.
     */
    public static MimallocBenchRuns read(final Path file) throws IOException
    {
        final MimallocBenchRuns runs = new MimallocBenchRuns();
        for (final CsvRows.Row row : CsvRows.read(file))
        {
            final String program = row.text("program");
            runs.byProgram.computeIfAbsent(program, k -> new ArrayList<>()).add(new Run(program, row.text("allocator"),
                row.intValue("round"), row.doubleValue("seconds"), row.doubleValue("wall_s"), row.doubleValue("cpu_s"),
                row.longValue("peak_kib"), row.text("time_is")));
        }
        return runs;
    }

    /**
     * @return true if nothing was measured.
     */
    public boolean isEmpty()
    {
        return byProgram.isEmpty();
    }

    /**
     * @return programs in file order.
     */
    public List<String> programs()
    {
        return new ArrayList<>(byProgram.keySet());
    }

    /**
     * @param program a program.
     * @return its runs, in file order.
     */
    public List<Run> runs(final String program)
    {
        return byProgram.getOrDefault(program, List.of());
    }

    /**
     * @param program   a program.
     * @param allocator an allocator.
     * @param round     a round.
     * @return that run, or null if it was not measured.
     */
    public Run find(final String program, final String allocator, final int round)
    {
        for (final Run run : runs(program))
        {
            if (run.allocator().equals(allocator) && run.round() == round)
            {
                return run;
            }
        }
        return null;
    }
}
