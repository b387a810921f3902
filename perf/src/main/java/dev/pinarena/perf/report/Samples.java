package dev.pinarena.perf.report;

import java.util.Arrays;
import java.util.Collection;

/**
 * Repeated measurements of one quantity: min, median and max, and ratios between two such sets.
 */
public final class Samples
{
    private final double[] sorted;

    /**
     * @param values at least one measurement.
     */
    public Samples(final double... values)
    {
        if (values.length == 0)
        {
            throw new IllegalArgumentException("no samples");
        }
        this.sorted = values.clone();
        Arrays.sort(sorted);
    }

    /**
     * @param values at least one measurement, as gathered in a list.
     * @return those samples.
     */
    public static Samples of(final Collection<Double> values)
    {
        return new Samples(values.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /**
     * @return the smallest sample.
     */
    public double min()
    {
        return sorted[0];
    }

    /**
     * @return the median (the mean of the two middle samples for an even count).
     */
    public double median()
    {
        final int n = sorted.length;
        return (n & 1) == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /**
     * @return the largest sample.
     */
    public double max()
    {
        return sorted[sorted.length - 1];
    }

    /**
     * @param i from 0 to {@link #count()} - 1.
     * @return the i-th smallest sample.
     */
    public double get(final int i)
    {
        return sorted[i];
    }

    /**
     * @return the number of samples.
     */
    public int count()
    {
        return sorted.length;
    }

    /**
     * Ratio of medians, with its spread: the smallest and largest ratio any pair of samples could give.
     *
     * @param numerator   A.
     * @param denominator B.
     * @return {min, median, max} of A/B.
     */
    public static double[] ratio(final Samples numerator, final Samples denominator)
    {
        return new double[] {
            numerator.min() / denominator.max(),
            numerator.median() / denominator.median(),
            numerator.max() / denominator.min()};
    }
}
