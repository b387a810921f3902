package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Registration cost curves read from the CSV files the curve harnesses write (Java on the host, C on the
 * Soft-RoCE testbed): {@code backend,backing,bytes,reps,min_us,median_us,max_us,us_per_mib}. Other lines
 * (headers, progress) are passed over.
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
     */
    public static CostCurves read(final List<Path> files) throws IOException
    {
        final List<Point> points = new ArrayList<>();
        for (final Path file : files)
        {
            if (!Files.isRegularFile(file))
            {
                continue;
            }
            for (final String line : Files.readAllLines(file))
            {
                final String[] f = line.split(",", -1);
                if (f.length != 8 || f[0].equals("backend") || f[4].isEmpty())
                {
                    continue;
                }
                points.add(new Point(f[0], f[1].toLowerCase(Locale.ROOT), Long.parseLong(f[2]),
                    Double.parseDouble(f[4]), Double.parseDouble(f[5]), Double.parseDouble(f[6])));
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
