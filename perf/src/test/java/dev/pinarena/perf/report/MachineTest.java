package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The report names the system's transparent huge page mode: the shim's figures differ between "madvise" and
 * "always", and a reader's machine may run the other.
 */
class MachineTest
{
    @Test
    void theBracketedModeIsTheOneInForce(@TempDir final Path dir) throws Exception
    {
        assertEquals("madvise", Machine.thpMode(Files.writeString(dir.resolve("a"), "always [madvise] never\n")));
        assertEquals("always", Machine.thpMode(Files.writeString(dir.resolve("b"), "[always] madvise never\n")));
        assertEquals("none (no THP in this kernel)", Machine.thpMode(dir.resolve("absent")));
        assertEquals("unknown (always madvise never)",
            Machine.thpMode(Files.writeString(dir.resolve("c"), "always madvise never\n")));
    }

    @Test
    void theDescriptionCarriesThisMachinesMode()
    {
        final String mode = Machine.thpMode(Machine.THP_ENABLED);
        assertTrue(Machine.describe().stream().anyMatch(l -> l.startsWith("Transparent huge pages: " + mode + " (")),
            Machine.describe().toString());
    }
}
