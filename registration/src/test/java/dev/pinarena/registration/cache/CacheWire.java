package dev.pinarena.registration.cache;

import dev.pinarena.registration.Registrar;

/**
 * What the registration cache's scenario suite ({@link RegistrationCacheScenarios}) knows of pinning: a
 * registrar to build the cache on, and a send through a cached region compared with the bytes the source
 * address shows now. Bound twice: io_uring fixed buffers on the host ({@link UringCacheWire}: WRITE_FIXED
 * into a file, read back) and verbs in the Soft-RoCE VM ({@link VerbsCacheWire}: an RDMA WRITE over a
 * loopback queue pair). Either way the send delivers the bytes of the frames the registration pinned, so a
 * stale registration cannot pass.
 */
interface CacheWire extends AutoCloseable
{
    /** @return the registrar the cache registers with. */
    Registrar registrar();

    /**
     * Sends {@code length} bytes at {@code address} through {@code region}; one send at a time.
     *
     * @return how many delivered bytes equal the source's current bytes.
     */
    int send(CachedRegion region, long address, int length);

    /** @return how many of the first {@code length} bytes the last send delivered equal {@code b}. */
    int delivered(int length, byte b);

    /** @return get/send/put rounds per worker in the threaded scenario (the VM emulates its CPUs). */
    int threadIterations();

    @Override
    void close();
}
