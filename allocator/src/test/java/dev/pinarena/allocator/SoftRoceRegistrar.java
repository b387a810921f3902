package dev.pinarena.allocator;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.verbs.VerbsProbe;
import dev.pinarena.registration.verbs.VerbsRegistrar;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The verbs registrar a {@code softroce} test of this module runs on: rxe0 in {@code testbed/softroce}, else the
 * default device, without a pin budget. Without a usable device the calling test is reported skipped with the
 * reason, or fails when {@code PINARENA_REQUIRE_RDMA=1} (as the VM stage runs it).
 */
final class SoftRoceRegistrar
{
    private SoftRoceRegistrar()
    {
    }

    static VerbsRegistrar open()
    {
        final VerbsProbe probe = VerbsProbe.probe();
        if (!probe.available())
        {
            if ("1".equals(System.getenv("PINARENA_REQUIRE_RDMA")))
            {
                fail("PINARENA_REQUIRE_RDMA=1 but " + probe);
            }
            assumeTrue(false, "no RDMA here (run in testbed/softroce): " + probe.reason());
        }
        return VerbsRegistrar.open(probe.deviceNames().contains("rxe0") ? "rxe0" : null,
            new PinBudget(PinBudget.UNLIMITED));
    }
}
