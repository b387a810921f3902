package dev.pinarena.registration.cache;

/**
 * The registration cache's scenarios over io_uring fixed buffers on the host: every send is a WRITE_FIXED
 * through the cached region, read back.
 */
final class RegistrationCacheUringTest extends RegistrationCacheScenarios
{
    @Override
    CacheWire openWire(final long budget)
    {
        return new UringCacheWire(budget);
    }
}
