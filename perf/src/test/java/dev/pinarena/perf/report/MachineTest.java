package dev.pinarena.perf.report;

import dev.pinarena.registration.os.HugePagePools;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The report names the system's transparent huge page mode: the shim's figures differ between "madvise" and
 * "always", and a reader's machine may run the other.
 */
class MachineTest
{
    @Test
    void theDescriptionCarriesThisMachinesMode()
    {
        final String mode = HugePagePools.transparentHugePageMode();
        assertTrue(mode.equals("always") || mode.equals("madvise") || mode.equals("never") || mode.equals("unsupported"),
            "THP mode read as '" + mode + "'");
        assertTrue(Machine.describe().stream().anyMatch(l -> l.startsWith("Transparent huge pages: " + mode + " (")),
            Machine.describe().toString());
    }
}
