package dev.pinarena.registration.cache;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.testkit.VerbsLoopback;
import dev.pinarena.registration.verbs.VerbsRegistrar;

import java.io.IOException;

/**
 * The scenario wire over verbs ({@link VerbsRegistrar}, rxe0 in {@code testbed/softroce}): a send is an RDMA
 * WRITE over an RC loopback queue pair from the cached region's lkey into a registered destination
 * ({@link VerbsLoopback}).
 */
final class VerbsCacheWire implements CacheWire
{
    /** The destination's size: the largest single send of the suite. */
    static final int SEND_MAX = 4 << 20;

    private final VerbsRegistrar registrar;
    private final VerbsLoopback loopback;

    VerbsCacheWire(final String device, final long budget) throws IOException
    {
        registrar = VerbsRegistrar.open(device, new PinBudget(budget));
        loopback = VerbsLoopback.open(registrar.protectionDomain(), SEND_MAX);
    }

    @Override
    public Registrar registrar()
    {
        return registrar;
    }

    @Override
    public int send(final CachedRegion region, final long address, final int length)
    {
        return loopback.send(address, length, region.lkey());
    }

    @Override
    public int delivered(final int length, final byte b)
    {
        return loopback.delivered(length, b);
    }

    @Override
    public int threadIterations()
    {
        return 300;
    }

    @Override
    public void close()
    {
        loopback.close();
        registrar.close();
    }
}
