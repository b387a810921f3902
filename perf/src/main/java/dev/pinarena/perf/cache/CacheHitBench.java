package dev.pinarena.perf.cache;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.cache.CachedRegion;
import dev.pinarena.registration.cache.RegistrationCache;
import dev.pinarena.registration.os.Linux;
import dev.pinarena.registration.uring.IoUringRegistrar;

/**
 * Registration cache hit and miss cost against raw io_uring registration, in one run (a plain timing
 * harness until JMH lands in perf/pom.xml; best of 5 rounds after warm-up).
 * <p>
 * {@code java -cp perf/target/classes:perf/target/lib/* dev.pinarena.perf.cache.CacheHitBench}
 */
public final class CacheHitBench
{
    private CacheHitBench()
    {
    }

    public static void main(final String[] args)
    {
        final long[] sizes = {4096, 65536, 1 << 20};
        try (IoUringRegistrar registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            final RegistrationCache cache = new RegistrationCache(registrar, 1024, Long.MAX_VALUE, false, null);
            final long buf = Linux.mmap(0, 64L << 20, Linux.PROT_READ | Linux.PROT_WRITE,
                Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | Linux.MAP_POPULATE, -1, 0);
            for (int i = 0; i < 64; i++)
            {
                cache.put(cache.get(buf + (32L << 20) + i * 8192L, 4096, Access.LOCAL_WRITE));
            }
            System.out.printf("# RegistrationCache bench (io_uring, 64 other regions, no feed)%n");
            System.out.printf("%-8s %10s %10s %10s %10s %10s%n", "size", "hit_ns", "miss_ns", "raw_ns", "miss/raw", "raw/hit");
            for (final long len : sizes)
            {
                cache.put(cache.get(buf, len, Access.LOCAL_WRITE));
                double hit = Double.MAX_VALUE;
                long sink = 0;
                for (int round = 0; round < 8; round++)
                {
                    final int n = 5_000_000;
                    final long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++)
                    {
                        final CachedRegion r = cache.get(buf + (i & 7) * 64, len - 512, Access.LOCAL_WRITE);
                        sink += r.lkey();
                        cache.put(r);
                    }
                    hit = Math.min(hit, (System.nanoTime() - t0) / (double)n);
                }
                final int m = len >= (1 << 20) ? 300 : 2000;
                long t0 = System.nanoTime();
                for (int i = 0; i < m; i++)
                {
                    cache.put(cache.get(buf, len, Access.LOCAL_WRITE));
                    cache.invalidate(buf, len);
                }
                final double miss = (System.nanoTime() - t0) / (double)m;
                t0 = System.nanoTime();
                for (int i = 0; i < m; i++)
                {
                    final Region r = registrar.register(buf, len, Access.LOCAL_WRITE);
                    registrar.deregister(r);
                }
                final double raw = (System.nanoTime() - t0) / (double)m;
                System.out.printf("%-8d %10.1f %10.0f %10.0f %10.2f %10.0f%s%n", len, hit, miss, raw, miss / raw, raw / hit,
                    sink == 42 ? " " : "");
            }
            cache.close();
        }
    }
}
