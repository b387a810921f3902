package dev.pinarena.registration.cache;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.uring.FixedBufferProbe;
import dev.pinarena.registration.uring.IoUringRegistrar;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The scenario wire over io_uring fixed buffers, the host's real long-term pin: a send is a WRITE_FIXED
 * through the cached region into a file, read back ({@link FixedBufferProbe}).
 */
final class UringCacheWire implements CacheWire
{
    private final IoUringRegistrar registrar;
    private byte[] last = new byte[0];

    UringCacheWire(final long budget)
    {
        registrar = IoUringRegistrar.open(new PinBudget(budget));
    }

    @Override
    public Registrar registrar()
    {
        return registrar;
    }

    @Override
    public synchronized int send(final CachedRegion region, final long address, final int length)
    {
        last = FixedBufferProbe.send(registrar, region.region(), address, length);
        final UnsafeBuffer src = new UnsafeBuffer(address, length);
        int same = 0;
        for (int i = 0; i < length; i++)
        {
            same += last[i] == src.getByte(i) ? 1 : 0;
        }
        return same;
    }

    @Override
    public synchronized int delivered(final int length, final byte b)
    {
        int n = 0;
        for (int i = 0; i < length; i++)
        {
            n += last[i] == b ? 1 : 0;
        }
        return n;
    }

    @Override
    public int threadIterations()
    {
        return 800;
    }

    @Override
    public void close()
    {
        registrar.close();
    }
}
