package dev.pinarena.perf.report;

import org.knowm.xchart.CategoryChart;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * "What does the shim save a real MPI?" — registrations per message that Open MPI's RDMA path (libfabric's
 * registration cache) makes when the application mallocs, sends and frees a buffer per message, under glibc and
 * under libpinarena.so, counted in the Soft-RoCE guest.
 */
public final class MpiSavingsSection implements ReportSection
{
    private static final String SHIM = "pinarena";
    private static final List<String> ALLOCATORS = List.of("glibc", "glibc-fixed", SHIM);

    private final MpiLoops loops;

    /**
     * @param loops the counted loops.
     */
    public MpiSavingsSection(final MpiLoops loops)
    {
        this.loops = loops;
    }

    public void write(final StringBuilder md, final Path reportDir) throws IOException
    {
        md.append("## What does the shim save a real MPI's registration cache?\n\n");
        if (loops.rows().isEmpty())
        {
            md.append("Not measured in this run (the Soft-RoCE testbed run failed or was skipped).\n\n");
            return;
        }
        md.append("Open MPI 4.1 (`pml cm`, `mtl ofi`, libfabric `verbs;ofi_rxm`), two ranks over rxe0 in the ")
            .append("Soft-RoCE guest (`bindings-c/tests/mpi`). Rank 0 loops: `churn` mallocs a buffer, sends it and ")
            .append("frees it; `reuse` sends one buffer. Counted: `ibv_reg_mr` calls the MPI made (misses of ")
            .append("libfabric's registration cache) and `ibv_dereg_mr` calls (invalidations) inside each loop. ")
            .append("`glibc`: default tunables (its moving mmap threshold soon serves a repeated size from the heap); ")
            .append("`glibc-fixed`: `mmap_threshold=1 MiB`, so each large free unmaps (as when sizes vary); ")
            .append("`pinarena`: libpinarena.so preloaded, Open MPI's memory hooks off. Every byte was checked. ")
            .append("Times are of an emulated machine: only their ratio means anything.\n\n");

        md.append("| loop | size | messages |");
        for (final String allocator : ALLOCATORS)
        {
            md.append(' ').append(allocator).append(" reg / dereg |");
        }
        md.append(" glibc-fixed ÷ pinarena registrations | glibc-fixed ÷ pinarena time |\n");
        md.append("|---|---:|---:|").append("---:|".repeat(ALLOCATORS.size() + 2)).append('\n');

        final Set<String> keys = new LinkedHashSet<>();
        for (final MpiLoops.Row row : loops.rows())
        {
            keys.add(row.loop() + ":" + row.size());
        }
        final List<String> labels = new ArrayList<>();
        final List<List<Double>> perMessage = new ArrayList<>();
        for (int i = 0; i < ALLOCATORS.size(); i++)
        {
            perMessage.add(new ArrayList<>());
        }
        for (final String key : keys)
        {
            final String loop = key.substring(0, key.indexOf(':'));
            final long size = Long.parseLong(key.substring(key.indexOf(':') + 1));
            final MpiLoops.Row any = firstOf(loop, size);
            final String label = loop + " " + sizeLabel(size);
            labels.add(label);
            md.append("| ").append(loop).append(" | ").append(sizeLabel(size)).append(" | ").append(any.iterations())
                .append(" |");
            for (int i = 0; i < ALLOCATORS.size(); i++)
            {
                final MpiLoops.Row row = loops.find(ALLOCATORS.get(i), loop, size);
                md.append(row == null ? " – |" : " " + row.registrations() + " / " + row.deregistrations() +
                    (row.badBytes() != 0 ? " (" + row.badBytes() + " bad bytes!)" : "") + " |");
                perMessage.get(i).add(row == null ? 0.0 : (double)row.registrations() / row.iterations());
            }
            final MpiLoops.Row fixed = loops.find("glibc-fixed", loop, size);
            final MpiLoops.Row shim = loops.find(SHIM, loop, size);
            md.append(' ').append(ratio(fixed == null ? 0 : fixed.registrations(), shim == null ? 0 : shim.registrations()))
                .append(" |");
            md.append(fixed == null || shim == null || shim.seconds() <= 0 ? " – |" :
                String.format(Locale.ROOT, " %.2f |", fixed.seconds() / shim.seconds()));
            md.append('\n');
        }
        md.append('\n');

        final CategoryChart chart = Charts.bars("Registrations per message (lower is better)", "loop",
            "ibv_reg_mr calls per message", false);
        for (int i = 0; i < ALLOCATORS.size(); i++)
        {
            chart.addSeries(ALLOCATORS.get(i), labels, perMessage.get(i));
        }
        Charts.savePng(chart, reportDir.resolve("mpi-registrations.png"));
        md.append("![registrations per message](mpi-registrations.png)\n\n");
    }

    private MpiLoops.Row firstOf(final String loop, final long size)
    {
        for (final MpiLoops.Row row : loops.rows())
        {
            if (row.loop().equals(loop) && row.size() == size)
            {
                return row;
            }
        }
        throw new IllegalStateException("no row for " + loop + " " + size);
    }

    static String ratio(final long numerator, final long denominator)
    {
        if (denominator == 0)
        {
            return numerator == 0 ? "– (0 and 0)" : numerator + " vs 0";
        }
        return String.format(Locale.ROOT, "%.1f", (double)numerator / denominator);
    }

    static String sizeLabel(final long bytes)
    {
        return bytes >= 1 << 20 ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
    }
}
