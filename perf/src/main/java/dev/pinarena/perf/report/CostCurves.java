package dev.pinarena.perf.report;

import dev.pinarena.perf.curve.RegistrationCostCurve;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Registration cost curves read from the CSV files the curve harnesses write (Java on the host, C on the
 * Soft-RoCE testbed): {@code backend,backing,bytes,reps,min_us,median_us,max_us,us_per_mib}. The C tool prints a
 * line naming its device before the header (a preamble, passed over), and a row with 0 reps for a size it could
 * not map (nothing measured: left out). Any other row that is not of the format is refused.
 */
public final class CostCurves
{

    /**
     * One measured (backend, backing, size).
     *
     * @param backend   registrar: io_uring, verbs, mlock.
     * @param backing   page backing label: 4k or hugetlb-2m.
     * @param bytes     bytes registered.
     * @param minUs     fastest register + deregister.
     * @param medianUs  median.
     * @param maxUs     slowest.
     */
    public record Point(String backend, String backing, long bytes, double minUs, double medianUs, double maxUs)
    {
        /**
         * @return median microseconds per MiB registered.
         */
        public double medianUsPerMib()
        {
            return medianUs / (bytes / (double)(1L << 20));
        }
    }

    private final List<Point> points;

    private CostCurves(final List<Point> points)
    {
        this.points = List.copyOf(points);
    }

    /**
     * @param files CSV files; missing ones are passed over.
     * @return every measured point.
     * @throws IOException if a file cannot be read.
     * @throws CsvFormatException for a row that is not of the format, naming the file, line and column.
     */
    public static CostCurves read(final List<Path> files) throws IOException
    {
        final List<Point> points = new ArrayList<>();
        for (final Path file : files)
        {
            for (final CsvRows.Row row : CsvRows.read(file, CsvLayout.afterPreamble(RegistrationCostCurve.HEADER)))
            {
                if (row.intValue("reps") == 0)
                {
                    continue;                            // could not map that size: nothing measured
                }
                points.add(new Point(row.text("backend"), row.text("backing").toLowerCase(Locale.ROOT),
                    row.longValue("bytes"), row.doubleValue("min_us"), row.doubleValue("median_us"),
                    row.doubleValue("max_us")));
            }
        }
        return new CostCurves(points);
    }

    /**
     * @return all points, in file order.
     */
    public List<Point> points()
    {
        return points;
    }

    /**
     * @param backend registrar name.
     * @param backing page backing label.
     * @return that curve, by increasing size.
     */
    public List<Point> curve(final String backend, final String backing)
    {
        final List<Point> curve = new ArrayList<>();
        for (final Point point : points)
        {
            if (point.backend().equals(backend) && point.backing().equals(backing))
            {
                curve.add(point);
            }
        }
        curve.sort((a, b) -> Long.compare(a.bytes(), b.bytes()));
        return curve;
    }

    /**
     * @return the backends present, in first-seen order.
     */
    public List<String> backends()
    {
        final List<String> backends = new ArrayList<>();
        for (final Point point : points)
        {
            if (!backends.contains(point.backend()))
            {
                backends.add(point.backend());
            }
        }
        return backends;
    }
}
