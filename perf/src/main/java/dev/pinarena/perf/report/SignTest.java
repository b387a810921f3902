package dev.pinarena.perf.report;

import java.util.Locale;

/**
 * The sign test over paired ratios: how often a fair coin gives at least as many pairs on one side of 1.0 as were
 * measured. Interleaved rounds on a shared machine swing by 10 % and more, so "every pair was slower" proves
 * nothing at three rounds (a coin does it 1 time in 8); the test says how many rounds a verdict needs.
 */
public final class SignTest
{
    /** The chance below which a side is taken as real rather than the machine's noise. */
    public static final double SIGNIFICANCE = 0.05;

    private SignTest()
    {
    }

    /**
     * @return {@link #SIGNIFICANCE} as a whole number of times in 100, for prose.
     */
    public static String percent()
    {
        return String.format(Locale.ROOT, "%.0f", SIGNIFICANCE * 100);
    }

    /**
     * @param ratios paired ratios (A ÷ B per round).
     * @return the one-sided p-value that A is larger: the chance that a fair coin, tossed once per pair that is
     *         not exactly 1.0, comes up heads at least as often as a pair was above 1.0; 1.0 with no such pair.
     */
    public static double pAbove(final Samples ratios)
    {
        return tail(ratios, true);
    }

    /**
     * @param ratios paired ratios (A ÷ B per round).
     * @return the one-sided p-value that A is smaller, as {@link #pAbove(Samples)} for pairs below 1.0.
     */
    public static double pBelow(final Samples ratios)
    {
        return tail(ratios, false);
    }

    /**
     * @param ratios paired ratios.
     * @return how many are above 1.0.
     */
    public static int above(final Samples ratios)
    {
        return count(ratios, true);
    }

    /**
     * @param ratios paired ratios.
     * @return how many are below 1.0.
     */
    public static int below(final Samples ratios)
    {
        return count(ratios, false);
    }

    private static int count(final Samples ratios, final boolean above)
    {
        int n = 0;
        for (int i = 0; i < ratios.count(); i++)
        {
            final double r = ratios.get(i);
            if (above ? r > 1.0 : r < 1.0)
            {
                n++;
            }
        }
        return n;
    }

    /**
     * @param n pairs that are not exactly 1.0.
     * @return the chance that n pairs of pure noise (each side as likely) get a verdict, either side: twice the
     *         largest one-sided tail below {@link #SIGNIFICANCE} (5 pairs: 2 × 1/32; 7: 2 × 1/128; 8: 2 × 9/256),
     *         0 when even all n on one side are not that rare.
     */
    public static double chanceOfVerdict(final int n)
    {
        if (n < 0)
        {
            throw new IllegalArgumentException("pairs " + n + " below 0");
        }
        for (int k = 0; k <= n; k++)
        {
            final double p = atLeast(k, n);                  // falls as k grows: the first below is the largest
            if (p < SIGNIFICANCE)
            {
                return 2 * p;
            }
        }
        return 0;
    }

    /**
     * @param k successes.
     * @param n trials, each a fair coin.
     * @return P(at least k heads in n tosses).
     */
    static double atLeast(final int k, final int n)
    {
        if (k < 0 || k > n)
        {
            throw new IllegalArgumentException("successes " + k + " outside 0.." + n);
        }
        double sum = 0;
        double choose = 1;                                   // C(n, 0), then C(n, i) from C(n, i - 1)
        for (int i = 0; i <= n; i++)
        {
            if (i >= k)
            {
                sum += choose;
            }
            choose = choose * (n - i) / (i + 1);
        }
        return sum / Math.pow(2, n);
    }

    private static double tail(final Samples ratios, final boolean above)
    {
        final int over = above(ratios);
        final int under = below(ratios);
        return atLeast(above ? over : under, over + under);
    }
}
