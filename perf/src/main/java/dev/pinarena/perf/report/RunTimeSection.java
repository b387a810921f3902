package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * How long the run took: each step's seconds against its budget ({@code steps.csv}, written by
 * {@code perf/bench}), and every round a step cut short to stay within it ({@code cuts.csv}, written by the
 * JMH suite and {@code native/collect.sh}), so a reader knows which figures rest on fewer rounds.
 */
public final class RunTimeSection implements ReportSection
{
    private final List<String> steps;
    private final List<String> cuts;

    private RunTimeSection(final List<String> steps, final List<String> cuts)
    {
        this.steps = steps;
        this.cuts = cuts;
    }

    /**
     * @param results the run's results directory.
     * @return the section; missing files give an empty table or no cuts.
     * @throws IOException if a file exists and cannot be read.
     */
    public static RunTimeSection read(final Path results) throws IOException
    {
        final Path steps = results.resolve("steps.csv");
        final Path cuts = results.resolve("cuts.csv");
        final List<String> stepRows = Files.exists(steps) ? Files.readAllLines(steps) : List.of();
        return new RunTimeSection(stepRows.isEmpty() ? stepRows : stepRows.subList(1, stepRows.size()),
            Files.exists(cuts) ? Files.readAllLines(cuts) : List.of());
    }

    @Override
    public void write(final StringBuilder md, final Path reportDir)
    {
        md.append("## How long did this run take?\n\n");
        if (steps.isEmpty())
        {
            md.append("Not recorded in this run (no `steps.csv`).\n\n");
            return;
        }
        md.append("| step | seconds | budget |\n|---|---|---|\n");
        long total = 0;
        for (final String row : steps)
        {
            // step,budget_s,seconds; the step's name may hold commas, the two numbers do not
            final int last = row.lastIndexOf(',');
            final int middle = row.lastIndexOf(',', last - 1);
            final long budget = Long.parseLong(row.substring(middle + 1, last));
            final long seconds = Long.parseLong(row.substring(last + 1));
            total += seconds;
            md.append("| ").append(row, 0, middle).append(" | ").append(seconds).append(" | ")
                .append(budget == 0 ? "none" : budget + (seconds > budget ? " (over)" : "")).append(" |\n");
        }
        md.append("| all steps but the report | ").append(total).append(" | |\n\n");
        if (cuts.isEmpty())
        {
            md.append("No step cut a round: every figure comes from the rounds its mode asks for.\n\n");
            return;
        }
        md.append("Cut short to stay within a budget (every contender still measured, on fewer or shorter rounds):\n\n");
        for (final String cut : cuts)
        {
            final String[] field = cut.split(",", 3);
            md.append("- ").append(field[0]).append(", ").append(field[1]).append(": ").append(field[2]).append('\n');
        }
        md.append('\n');
    }
}
