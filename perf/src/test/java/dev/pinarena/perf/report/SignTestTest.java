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
    }

    @Test
    void refusesSuccessesOutsideTheTrials()
    {
        assertThrows(IllegalArgumentException.class, () -> SignTest.atLeast(6, 5));
        assertThrows(IllegalArgumentException.class, () -> SignTest.atLeast(-1, 5));
    }
}
