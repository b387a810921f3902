package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How long the run took: each step's seconds against its budget ({@code steps.csv}, written by
 * {@code perf/bench}), and every round a step cut short to stay within it ({@code cuts.csv}, written by the
 * JMH suite and {@code native/collect.sh}), so a reader knows which figures rest on fewer rounds.
 */
public final class RunTimeSection implements ReportSection
{
    /** What {@code perf/bench --step} appends to the name of a step it ran again, before the time and commit. */
    static final String RUN_AGAIN = " — run again ";
    /** {@code steps.csv}: a header, then one row per step; a step's name may hold commas. */
    private static final CsvLayout STEPS = CsvLayout.headerFirst().commasIn("step");
    /** {@code cuts.csv}: appended to by each step that cuts, no header; the cut's description may hold commas. */
    private static final CsvLayout CUTS = CsvLayout.headerless("step,subject,cut").commasIn("cut");

    private record Step(String name, long budget, long seconds)
    {
    }

    private record Cut(String step, String subject, String cut)
    {
    }

    private final List<Step> steps;
    private final List<Cut> cuts;

    private RunTimeSection(final List<Step> steps, final List<Cut> cuts)
    {
        this.steps = steps;
        this.cuts = cuts;
    }

    /**
     * @param results the run's results directory.
     * @return the section; missing files give an empty table or no cuts.
     * @throws IOException if a file exists and cannot be read.
     * @throws CsvFormatException for a row that is not of its file's format, naming the file, line and column.
     */
    public static RunTimeSection read(final Path results) throws IOException
    {
        final List<Step> steps = new ArrayList<>();
        for (final CsvRows.Row row : CsvRows.read(results.resolve("steps.csv"), STEPS))
        {
            steps.add(new Step(row.text("step"), row.longValue("budget_s"), row.longValue("seconds")));
        }
        final List<Cut> cuts = new ArrayList<>();
        for (final CsvRows.Row row : CsvRows.read(results.resolve("cuts.csv"), CUTS))
        {
            cuts.add(new Cut(row.text("step"), row.text("subject"), row.text("cut")));
        }
        return new RunTimeSection(steps, cuts);
    }

    /**
     * @return how many steps (the build aside) were run again after the whole run, with {@code perf/bench --step}.
     */
    public int stepsRunAgain()
    {
        int n = 0;
        for (final Step step : steps)
        {
            if (step.name().contains(RUN_AGAIN) && !step.name().startsWith("build"))
            {
                n++;
            }
        }
        return n;
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
        for (final Step step : steps)
        {
            total += step.seconds();
            md.append("| ").append(step.name()).append(" | ").append(step.seconds()).append(" | ")
                .append(step.budget() == 0 ? "none" : step.budget() + (step.seconds() > step.budget() ? " (over)" : ""))
                .append(" |\n");
        }
        md.append("| all steps but the report | ").append(total).append(" | |\n\n");
        if (cuts.isEmpty())
        {
            md.append("No step cut a round: every figure comes from the rounds its mode asks for.\n\n");
            return;
        }
        md.append("Cut short to stay within a budget (every contender still measured, on fewer or shorter rounds):\n\n");
        for (final Cut cut : cuts)
        {
            md.append("- ").append(cut.step()).append(", ").append(cut.subject()).append(": ").append(cut.cut()).append('\n');
        }
        md.append('\n');
    }
}
