package dev.pinarena.perf;

import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.types.size_t;

/**
 * Pins the calling thread to one CPU, for the two-thread benchmarks: on a 2-CPU machine the scheduler
 * sometimes puts both benchmark threads on one CPU for a whole iteration, and the iteration then takes
 * several times longer (bimodal timings). Not on a hot path: called once per thread per trial.
 */
public final class CpuAffinity
{
    /** The glibc calls; pid 0 is the calling thread. */
    public interface Sched
    {
        /**
         * @param pid  0: the calling thread.
         * @param size bytes of {@code mask}.
         * @param mask the CPUs the thread may run on.
         * @return 0, or -1 with errno.
         */
        int sched_getaffinity(int pid, @size_t long size, @Out long[] mask);

        /**
         * @param pid  0: the calling thread.
         * @param size bytes of {@code mask}.
         * @param mask the CPUs the thread may run on from now on.
         * @return 0, or -1 with errno.
         */
        int sched_setaffinity(int pid, @size_t long size, @In long[] mask);
    }

    private static final int MASK_LONGS = 16;            // cpu_set_t: 1024 CPUs
    private static final Sched SCHED = LibraryLoader.create(Sched.class).load("c");

    private CpuAffinity()
    {
    }

    /**
     * Pins the calling thread to the {@code k}-th CPU (modulo the count) of those it may run on now.
     *
     * @param k which allowed CPU.
     * @return the CPU number, or -1 when the thread may run on one CPU only or the calls failed (left as is).
     */
    public static int pinCallingThread(final int k)
    {
        final long[] allowed = new long[MASK_LONGS];
        if (SCHED.sched_getaffinity(0, MASK_LONGS * 8L, allowed) != 0)
        {
            return -1;
        }
        int count = 0;
        for (final long word : allowed)
        {
            count += Long.bitCount(word);
        }
        if (count < 2)
        {
            return -1;
        }
        int seen = 0;
        for (int cpu = 0; cpu < MASK_LONGS * 64; cpu++)
        {
            if ((allowed[cpu >>> 6] & (1L << (cpu & 63))) != 0 && seen++ == k % count)
            {
                final long[] one = new long[MASK_LONGS];
                one[cpu >>> 6] = 1L << (cpu & 63);
                return SCHED.sched_setaffinity(0, MASK_LONGS * 8L, one) == 0 ? cpu : -1;
            }
        }
        return -1;
    }
}
