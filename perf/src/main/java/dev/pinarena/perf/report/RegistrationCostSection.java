package dev.pinarena.perf.report;

import org.knowm.xchart.XYChart;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * "What does registration cost per MiB, and with hugepages?" — register + deregister from 4 KiB upwards,
 * 4 KiB pages against 2 MiB hugepages, for every backend measured (io_uring on the host, verbs on the testbed).
 */
public final class RegistrationCostSection implements ReportSection
{
    private static final String SMALL = "4k";
    private static final String HUGE = "hugetlb-2m";

    private final CostCurves curves;

    /**
     * @param curves the measured points.
     */
    public RegistrationCostSection(final CostCurves curves)
    {
        this.curves = curves;
    }

    public void write(final StringBuilder md, final Path reportDir) throws IOException
    {
        md.append("## What does registration cost per MiB, and with hugepages?\n\n");
        if (curves.points().isEmpty())
        {
            md.append("Not measured in this run.\n\n");
            return;
        }
        md.append("One register + deregister of an already-populated range (what a registration-cache miss costs), ")
            .append("median of the repetitions; `verbs` ran on the Soft-RoCE testbed (emulated: compare ratios, ")
            .append("not absolute times), `io_uring` on this host.\n\n");

        final XYChart chart = Charts.logLog("Registration cost per MiB", "bytes registered", "µs per MiB (median)");
        for (final String backend : curves.backends())
        {
            for (final String backing : List.of(SMALL, HUGE))
            {
                final List<CostCurves.Point> curve = curves.curve(backend, backing);
                if (curve.isEmpty())
                {
                    continue;
                }
                final List<Double> x = new ArrayList<>();
                final List<Double> y = new ArrayList<>();
                for (final CostCurves.Point point : curve)
                {
                    x.add((double)point.bytes());
                    y.add(point.medianUsPerMib());
                }
                chart.addSeries(backend + " " + backing, x, y);
            }
            table(md, backend);
        }
        Charts.savePng(chart, reportDir.resolve("registration-cost.png"));
        md.append("![registration cost per MiB](registration-cost.png)\n\n");
    }

    private void table(final StringBuilder md, final String backend)
    {
        final List<CostCurves.Point> small = curves.curve(backend, SMALL);
        final List<CostCurves.Point> huge = curves.curve(backend, HUGE);
        md.append("**").append(backend).append("** — µs per register + deregister, min / median / max\n\n");
        md.append("| bytes | 4 KiB pages | 2 MiB hugepages | 4 KiB ÷ 2 MiB (median) | µs/MiB 4 KiB | µs/MiB 2 MiB |\n");
        md.append("|---:|---:|---:|---:|---:|---:|\n");
        for (final CostCurves.Point s : small)
        {
            final CostCurves.Point h = find(huge, s.bytes());
            md.append("| ").append(size(s.bytes())).append(" | ").append(triple(s)).append(" | ")
                .append(h == null ? "—" : triple(h)).append(" | ")
                .append(h == null ? "—" : String.format(Locale.ROOT, "%.2f×", s.medianUs() / h.medianUs())).append(" | ")
                .append(String.format(Locale.ROOT, "%.1f", s.medianUsPerMib())).append(" | ")
                .append(h == null ? "—" : String.format(Locale.ROOT, "%.1f", h.medianUsPerMib())).append(" |\n");
        }
        md.append('\n');
    }

    private static CostCurves.Point find(final List<CostCurves.Point> curve, final long bytes)
    {
        for (final CostCurves.Point point : curve)
        {
            if (point.bytes() == bytes)
            {
                return point;
            }
        }
        return null;
    }

    private static String triple(final CostCurves.Point p)
    {
        return String.format(Locale.ROOT, "%.0f / %.0f / %.0f", p.minUs(), p.medianUs(), p.maxUs());
    }

    static String size(final long bytes)
    {
        if (bytes >= (1L << 30))
        {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= (1L << 20))
        {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1024)
        {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }
}
