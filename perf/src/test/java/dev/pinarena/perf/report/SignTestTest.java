package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The sign test's tail against binomial figures worked by hand, and which pairs it counts.
 */
class SignTestTest
{
    private static final double EXACT = 1e-12;

    @Test
    void tailOfAFairCoin()
    {
        assertEquals(1.0, SignTest.atLeast(0, 5), EXACT);
        assertEquals(1.0 / 32, SignTest.atLeast(5, 5), EXACT);
        assertEquals(6.0 / 32, SignTest.atLeast(4, 5), EXACT);
        assertEquals(8.0 / 128, SignTest.atLeast(6, 7), EXACT);
        assertEquals(9.0 / 256, SignTest.atLeast(7, 8), EXACT);
        assertEquals(1.0, SignTest.atLeast(0, 0), EXACT);
        assertEquals(11.0 / 1024, SignTest.atLeast(9, 10), EXACT);
    }

    @Test
    void countsPairsOnEachSideAndLeavesOutTies()
    {
        final Samples ratios = new Samples(1.2, 1.1, 1.0, 0.9, 1.3, 1.0);
        assertEquals(SignTest.atLeast(3, 4), SignTest.pAbove(ratios), EXACT);   // 3 above, 1 below, 2 ties
        assertEquals(SignTest.atLeast(1, 4), SignTest.pBelow(ratios), EXACT);
        assertEquals(1.0, SignTest.pAbove(new Samples(1.0, 1.0)), EXACT);
        assertEquals(3, SignTest.above(ratios));
        assertEquals(1, SignTest.below(ratios));
    }

    @Test
    void chanceThatNoiseGetsAVerdict()
    {
        assertEquals(0.0, SignTest.chanceOfVerdict(4), EXACT);              // 4 of 4: 1/16, not below 5 in 100
        assertEquals(2.0 / 32, SignTest.chanceOfVerdict(5), EXACT);         // 5 of 5 either way
        assertEquals(2.0 / 128, SignTest.chanceOfVerdict(7), EXACT);        // 6 of 7 is 8/128: only 7 of 7
        assertEquals(2.0 * 9 / 256, SignTest.chanceOfVerdict(8), EXACT);    // 7 or 8 of 8
        assertEquals(0.0, SignTest.chanceOfVerdict(0), EXACT);
        assertThrows(IllegalArgumentException.class, () -> SignTest.chanceOfVerdict(-1));
    }

    @Test
    void refusesSuccessesOutsideTheTrials()
    {
        assertThrows(IllegalArgumentException.class, () -> SignTest.atLeast(6, 5));
        assertThrows(IllegalArgumentException.class, () -> SignTest.atLeast(-1, 5));
    }
}
