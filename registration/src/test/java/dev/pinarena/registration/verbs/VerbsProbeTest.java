package dev.pinarena.registration.verbs;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.RegistrationException;
import org.junit.jupiter.api.Test;

import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * Runs on any host: with or without RDMA, the probe answers and never throws.
 */
final class VerbsProbeTest
{
    /** A failing verbs call, its errno by name and number, then the fix. */
    private static final Pattern CALL_AND_ERRNO = Pattern.compile("ibv_\\w+(\\(.*\\))? failed: E[A-Z0-9]+ \\(\\d+\\) .+ — .+");

    @Test
    void probeNeverThrowsAndExplainsItself()
    {
        final VerbsProbe probe = assertDoesNotThrow(VerbsProbe::probe);
        if (probe.available())
        {
            assertFalse(probe.deviceNames().isEmpty());
            assertNull(probe.reason());
            assertNotNull(probe.description());
        }
        else
        {
            final String reason = probe.reason();
            assertNotNull(reason);
            assertTrue(
                CALL_AND_ERRNO.matcher(reason).matches() || reason.contains("apt-get install libibverbs1"),
                "reason should name the call and errno, or the package to install: " + reason);
        }
        assertThrows(UnsupportedOperationException.class, () -> probe.deviceNames().add("x"));
    }

    @Test
    void probeTwiceGivesTheSameAnswer()
    {
        final VerbsProbe first = VerbsProbe.probe();
        final VerbsProbe second = VerbsProbe.probe();
        assertEquals(first.available(), second.available());
        assertEquals(first.deviceNames(), second.deviceNames());
        assertEquals(first.reason(), second.reason());
    }

    @Test
    void withoutRdmaOpenAndListFailWithTheProbesReason()
    {
        final VerbsProbe probe = VerbsProbe.probe();
        assumeFalse(probe.available(), "this host has RDMA: " + probe);

        final RegistrationException open = assertThrows(
            RegistrationException.class, () -> VerbsRegistrar.open(null, new PinBudget(PinBudget.UNLIMITED)));
        if (probe.deviceNames().isEmpty())
        {
            assertEquals(probe.reason(), open.getMessage());
            assertEquals(probe.reason(), assertThrows(RegistrationException.class, VerbsRegistrar::listDevices).getMessage());
        }
        if (open.errno() == dev.pinarena.registration.internal.Errno.ENOSYS)
        {
            assertEquals("ibv_get_device_list", open.call());
            assertTrue(open.getMessage().contains("no RDMA support"), open.getMessage());
            assertTrue(open.getMessage().contains("io_uring backend"), open.getMessage());
        }
    }

    @Test
    void layoutHelpersNameWhatVerbsReports()
    {
        assertEquals("ACTIVE", VerbsLayout.portStateName(VerbsLayout.PORT_STATE_ACTIVE));
        assertEquals(1024, VerbsLayout.mtuBytes(3));
        assertEquals(4096, VerbsLayout.mtuBytes(5));
        assertEquals("Ethernet", VerbsLayout.linkLayerName(VerbsLayout.LINK_LAYER_ETHERNET));
    }
}
