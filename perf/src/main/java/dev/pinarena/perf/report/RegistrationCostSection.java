package dev.pinarena.perf.report;

import org.knowm.xchart.XYChart;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * "What does registration cost per MiB, and with hugepages?" — register + deregister from 4 KiB upwards,
 * 4 KiB pages, transparent huge pages (where measured) and 2 MiB hugetlb pages, for every backend measured
 * (io_uring on the host, verbs on the testbed), beside published figures from real NICs as anchors.
 */
public final class RegistrationCostSection implements ReportSection
{
    private static final String SMALL = "4k";
    private static final String THP = "thp";
    private static final String HUGE = "hugetlb-2m";
    /** Published figures from real NICs: anchors for the reader, never this run's measurements. */
    static final List<String> ANCHORS = List.of(
        "256 GB registered through libfabric's verbs provider (`fi_mr_reg`) in a little over 20 s, one caller: " +
            "about 12 GB/s, ≈ 80 µs/MiB — \"register memory for direct fabric access is time consuming\", " +
            "https://github.com/ofiwg/libfabric/issues/4738",
        "500 GB of pre-touched host memory registered sequentially (RDMA, `ibv_reg_mr` per region) in 49.2 s: " +
            "about 10 GB/s, ≈ 98 µs/MiB (11.7 s with registrations in parallel) — \"feat(rdma): add parallel " +
            "memory region registration support\", https://github.com/kvcache-ai/Mooncake/pull/855",
        "register + deregister of one 4 MiB buffer on an mlx5 NIC: 114.5 µs, ≈ 29 µs/MiB — \"vendor: libs3rdma " +
            "with lazy per-rail registration\", https://github.com/minio/minio-rs/pull/236",
        "hugepages shorten registration on Mellanox InfiniBand HCAs (the driver's per-page work) — F. Mietke et al., " +
            "\"Analysis of the Memory Registration Process in the Mellanox InfiniBand Software Stack\", Euro-Par " +
            "2006, https://link.springer.com/chapter/10.1007%2F11823285_13");

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
            for (final String backing : List.of(SMALL, THP, HUGE))
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
        md.append("Anchors: what others published for real NICs (their machines, not this run; `verbs` above is ")
            .append("emulated, so compare shapes and page-size ratios, not µs):\n\n");
        for (final String anchor : ANCHORS)
        {
            md.append("- ").append(anchor).append('\n');
        }
        md.append('\n');
    }

    private void table(final StringBuilder md, final String backend)
    {
        final List<CostCurves.Point> small = curves.curve(backend, SMALL);
        final List<CostCurves.Point> thp = curves.curve(backend, THP);
        final List<CostCurves.Point> huge = curves.curve(backend, HUGE);
        md.append("**").append(backend).append("** — µs per register + deregister, min / median / max\n\n");
        md.append("| bytes | 4 KiB pages | THP | 2 MiB hugetlb | 4 KiB ÷ 2 MiB (median) | µs/MiB 4 KiB | µs/MiB THP | ")
            .append("µs/MiB 2 MiB |\n");
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (final CostCurves.Point s : small)
        {
            final CostCurves.Point t = find(thp, s.bytes());
            final CostCurves.Point h = find(huge, s.bytes());
            md.append("| ").append(size(s.bytes())).append(" | ").append(triple(s)).append(" | ")
                .append(t == null ? "—" : triple(t)).append(" | ")
                .append(h == null ? "—" : triple(h)).append(" | ")
                .append(h == null ? "—" : String.format(Locale.ROOT, "%.2f×", s.medianUs() / h.medianUs())).append(" | ")
                .append(String.format(Locale.ROOT, "%.1f", s.medianUsPerMib())).append(" | ")
                .append(t == null ? "—" : String.format(Locale.ROOT, "%.1f", t.medianUsPerMib())).append(" | ")
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
