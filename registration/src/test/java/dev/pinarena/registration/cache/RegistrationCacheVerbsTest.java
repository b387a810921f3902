package dev.pinarena.registration.cache;

import dev.pinarena.registration.testkit.VerbsLoopback;
import dev.pinarena.registration.verbs.RdmaDevice;
import dev.pinarena.registration.verbs.VerbsRegistrar;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

import java.io.IOException;

/**
 * The registration cache's scenarios over real verbs pins ({@link VerbsRegistrar} on {@code rxe0} in
 * {@code testbed/softroce}): every send is an RDMA WRITE over an RC loopback queue pair from the cached
 * region's lkey into a registered destination ({@link VerbsCacheWire}). Without an RDMA device the class is
 * reported skipped with the reason, or fails with {@code PINARENA_REQUIRE_RDMA=1} (as the VM stage runs it).
 */
@Tag("softroce")
final class RegistrationCacheVerbsTest extends RegistrationCacheScenarios
{
    private static String device;

    @BeforeAll
    static void requireRdma() throws IOException
    {
        device = RdmaDevice.require();
        VerbsLoopback.library();
    }

    @Override
    CacheWire openWire(final long budget) throws IOException
    {
        return new VerbsCacheWire(device, budget);
    }
}
