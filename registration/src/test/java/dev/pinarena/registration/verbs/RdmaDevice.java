package dev.pinarena.registration.verbs;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The RDMA device a {@code softroce} test runs on: rxe0 in {@code testbed/softroce}, else the first one listed.
 * Without a usable device the calling test class is reported skipped with the reason, or fails when
 * {@code PINARENA_REQUIRE_RDMA=1} (as the VM stage runs it).
 */
public final class RdmaDevice
{
    private RdmaDevice()
    {
    }

    /** @return the device name to open a {@link VerbsRegistrar} on. */
    public static String require()
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
        return probe.deviceNames().contains("rxe0") ? "rxe0" : probe.deviceNames().get(0);
    }
}
