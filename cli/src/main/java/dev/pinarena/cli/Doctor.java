package dev.pinarena.cli;

import dev.pinarena.allocator.ArenaCapacity;
import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.HugePagePools;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.os.MemlockLimit;
import dev.pinarena.registration.os.PageBacking;
import dev.pinarena.registration.os.PageMap;
import dev.pinarena.registration.select.RegistrarKind;
import dev.pinarena.registration.select.RegistrarSelector;
import dev.pinarena.registration.uring.IoUringRegistrar;
import dev.pinarena.registration.verbs.VerbsProbe;

import java.io.PrintStream;
import java.util.List;

/**
 * {@code pinarena doctor}: one line per thing pinning depends on, each marked ok, warn or FAIL, with the
 * fix where something is off.
 */
final class Doctor
{
    private static final String OK = "ok  ";
    private static final String WARN = "warn";
    private static final String FAIL = "FAIL";

    private Doctor()
    {
    }

    static int run(final PrintStream out)
    {
        out.println("pinarena doctor — " + System.getProperty("os.name") + " " + System.getProperty("os.version") +
            ", " + Runtime.getRuntime().availableProcessors() + " cpus");
        int failures = 0;

        final VerbsProbe verbs = VerbsProbe.probe();
        if (verbs.available())
        {
            line(out, OK, "rdma devices", verbs.deviceNames() + ": " + verbs.description(), null);
        }
        else
        {
            line(out, WARN, "rdma devices", "none usable: " + verbs.reason(),
                "pinarena falls back to io_uring pins; for real lkeys/rkeys run on an RDMA host or the Soft-RoCE " +
                    "testbed (testbed/softroce)");
        }

        final MemlockLimit limit = MemlockLimit.read();
        if (limit.capIpcLock() || limit.softBytes() == PinBudget.UNLIMITED)
        {
            line(out, OK, "RLIMIT_MEMLOCK", limit.toString(), null);
        }
        else if (limit.softBytes() < (1L << 30))
        {
            line(out, WARN, "RLIMIT_MEMLOCK", limit + ": at most " + MemlockLimit.format(limit.softBytes()) +
                " can be pinned", "raise it: ulimit -l unlimited (or memlock in /etc/security/limits.conf), " +
                "or grant CAP_IPC_LOCK");
        }
        else
        {
            line(out, OK, "RLIMIT_MEMLOCK", limit.toString(), null);
        }

        final List<HugePagePools.Pool> pools = HugePagePools.pools();
        if (pools.isEmpty())
        {
            line(out, WARN, "hugepages", "this kernel offers no hugetlbfs pools", "chunks use THP or 4 KiB pages");
        }
        for (final HugePagePools.Pool pool : pools)
        {
            final String label = "hugepages " + MemlockLimit.format(pool.pageSize()).replace(" ", "");
            final String state = pool.total() + " reserved, " + pool.free() + " free";
            if (pool.free() > 0)
            {
                line(out, OK, label, state, null);
            }
            else
            {
                line(out, WARN, label, state, "reserve some: echo N > " + pool.reserveFile() +
                    (pool.pageSize() >= (1L << 30) ? " (1 GiB pages are best reserved at boot: hugepagesz=1G hugepages=N)" : ""));
            }
            // fork copies every pinned private page into the child at once; a hugetlb page comes from the free
            // pool, and when the pool cannot cover the pages a process pins, fork (and system()) fails with ENOMEM
            final long inUse = pool.total() - pool.free();
            if (inUse > 0 && inUse > pool.free())
            {
                line(out, WARN, label + " fork", inUse + " in use, " + pool.free() + " free: a process pinning the " +
                    "pages in use cannot fork (pinned hugetlb pages are copied into the child from the free pool)",
                    "keep as many pages free as a process pins, or leave hugetlb off in the C shim (the default; " +
                    "PINARENA_PAGES=hugetlb opts in)");
            }
        }

        final String thp = HugePagePools.transparentHugePageMode();
        if ("never".equals(thp) || "unsupported".equals(thp))
        {
            line(out, WARN, "THP", thp, "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
        }
        else
        {
            line(out, OK, "THP", thp + " (chunks ask with MADV_HUGEPAGE)", null);
        }

        try (IoUringRegistrar uring = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            line(out, OK, "io_uring", "available: " + uring.description(), null);
        }
        catch (final RegistrationException ex)
        {
            failures++;
            line(out, FAIL, "io_uring", ex.getMessage(), "without io_uring or verbs only mlock is left (no DMA pin)");
        }

        final MappedChunk chunk = ChunkMapper.map(ChunkMapper.MIN_CHUNK_SIZE, List.of(PageBacking.SMALL));
        try (PageMap pageMap = PageMap.open())
        {
            line(out, OK, "pagemap", "frame numbers readable (frame of a test page: 0x" +
                Long.toHexString(pageMap.frame(chunk.address())) + ")", null);
        }
        catch (final UnsupportedOperationException ex)
        {
            line(out, WARN, "pagemap", ex.getMessage(), "run as root to see physical frames (demo and tests need it)");
        }
        finally
        {
            chunk.unmap();
        }

        final ArenaCapacity capacity = ArenaCapacity.ofHost(ArenaConfig.defaults().chunkSize());
        line(out, OK, "arena cap", MemlockLimit.format(capacity.capBytes()) + " in " +
            MemlockLimit.format(capacity.chunkSize()) + " chunks: " + capacity.reason(), null);

        final RegistrarSelector auto = RegistrarSelector.open(RegistrarKind.AUTO, null, limit.defaultBudget());
        try
        {
            line(out, OK, "auto picks", auto.registrar().name(), null);
            for (final String reason : auto.reasons())
            {
                out.println("                        " + reason);
            }
        }
        finally
        {
            auto.registrar().close();
        }
        return failures == 0 ? 0 : 1;
    }

    private static void line(
        final PrintStream out, final String status, final String what, final String state, final String fix)
    {
        out.printf("  [%s] %-16s %s%n", status, what, state);
        if (fix != null)
        {
            out.printf("         %-16s fix: %s%n", "", fix);
        }
    }
}
