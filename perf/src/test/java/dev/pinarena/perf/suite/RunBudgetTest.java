package dev.pinarena.perf.suite;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RunBudgetTest
{
    private static final long S = 1_000_000_000L;

    @Test
    void aBatchThatWouldEndAfterItsShareIsCut()
    {
        final RunBudget budget = new RunBudget(100 * S, 10, 0);
        // 5 runs done in 60 s: 12 s a run; run 6 would end at 72 s, its share ends at 60 s.
        assertTrue(budget.mustCut(5, 1, 12.0 * S, 60 * S));
        // 5 runs done in 40 s: 8 s a run; run 6 ends at 48 s, within its 60 s.
        assertFalse(budget.mustCut(5, 1, 8.0 * S, 40 * S));
        // Time the first runs left unused goes to the next: 2 runs in 10 s, then 4 runs of 10 s end at 50 s,
        // within the share of runs 1..6 (60 s), though each of them is over the 10 s a run the budget gives.
        assertFalse(budget.mustCut(2, 4, 10.0 * S, 10 * S));
        assertTrue(budget.mustCut(2, 4, 13.0 * S, 10 * S));
    }

    @Test
    void withoutABudgetOrAPaceNothingIsCut()
    {
        assertFalse(new RunBudget(0, 10, 0).mustCut(5, 5, 1e12, 1000 * S));
        assertFalse(new RunBudget(S, 10, 0).mustCut(0, 5, 0, 1000 * S), "no pace yet: the first batch runs in full");
    }

    @Test
    void aBudgetOverNoRunsIsRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> new RunBudget(S, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new RunBudget(-1, 3, 0));
    }
}
