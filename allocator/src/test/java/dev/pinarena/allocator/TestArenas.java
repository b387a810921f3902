package dev.pinarena.allocator;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.uring.IoUringRegistrar;

/**
 * Test helper: arenas on the host's real long-term pin (io_uring fixed buffers), with small chunks so tests
 * exercise growth and caps without eating the huge page pool.
 */
final class TestArenas
{
    static final long CHUNK = 4L << 20;

    private TestArenas()
    {
    }

    static IoUringRegistrar registrar()
    {
        return IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED));
    }

    static ArenaConfig config(final long capBytes)
    {
        return ArenaConfig.defaults().withChunkSize(CHUNK).withCapBytes(capBytes);
    }
}
