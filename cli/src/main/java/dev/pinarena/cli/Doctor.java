package dev.pinarena.cli;

import dev.pinarena.allocator.ArenaCapacity;
import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.allocator.ArenaStats;
import dev.pinarena.allocator.PinnedArena;
import dev.pinarena.registration.Registrar;
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
import dev.pinarena.registration.verbs.MemoryWindows;
import dev.pinarena.registration.verbs.VerbsProbe;
import dev.pinarena.registration.verbs.VerbsRegistrar;
import dev.pinarena.registration.verbs.WindowsUnavailableException;

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

    /**
     * Which remote-key mode an arena (and the C shim) would use on this machine, and why: the same decision
     * the arena makes at its first remote chunk (a window pool with its bounds probe), made here on the first
     * device.
     */
    private static void remoteKeys(final PrintStream out, final VerbsProbe verbs)
    {
        if (!verbs.available())
        {
            line(out, WARN, "remote keys", "none per buffer: no RDMA device (" + verbs.reason() + "); io_uring and " +
                "mlock pin memory but make no keys for peers, so remote-scope buffers are pinned memory without " +
                "a key (Java rkey() throws NoRemoteKeyException, C pinarena_lookup returns -ENODATA)",
                "remote access needs an RDMA device (verbs)");
            return;
        }
        try (VerbsRegistrar registrar = VerbsRegistrar.open(null, new PinBudget(PinBudget.UNLIMITED)))
        {
            String mode;
            try (MemoryWindows windows = MemoryWindows.open(registrar))
            {
                mode = "window: a memory window bound to exactly each remote buffer, revoked on free (" +
                    registrar.deviceName() + " has memory windows and keeps a peer inside their bounds)";
            }
            catch (final WindowsUnavailableException ex)
            {
                mode = "mr: a registration of exactly each remote buffer, deregistered on free (" +
                    registrar.deviceName() + ": " + ex.getMessage() + ")";
            }
            line(out, OK, "remote keys", mode + "; the same in Java allocateRemote and the C shim's " +
                "pinarena_alloc_remote; the heap and local buffers are local-only", null);
        }
        catch (final RegistrationException ex)
        {
            line(out, WARN, "remote keys", "could not open " + verbs.deviceNames() + ": " + ex.getMessage(),
                "remote access needs a usable RDMA device");
        }
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

        remoteKeys(out, verbs);

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
            failures += backing(out, auto.registrar(), thp);
        }
        finally
        {
            auto.registrar().close();
        }
        return failures == 0 ? 0 : 1;
    }

    /** The chunk size of the probe arenas: two 2 MiB pages. */
    static final long PROBE_CHUNK = 4L << 20;

    /**
     * Maps one chunk in a small arena with the default preference, and one with what is left once the hugetlb
     * pools are empty (THP, then 4 KiB), and reports the backing each actually got.
     */
    private static int backing(final PrintStream out, final Registrar registrar, final String thpMode)
    {
        try
        {
            final ArenaStats now = probe(registrar, PageBacking.DEFAULT_PREFERENCE);
            final boolean huge = now.pinnedBytes(PageBacking.HUGETLB_2M) + now.pinnedBytes(PageBacking.HUGETLB_1G) > 0;
            line(out, huge ? OK : WARN, "arena backing", "a chunk maps as " + now.backingMix(),
                huge ? null : "reserve 2 MiB hugepages (echo N > /proc/sys/vm/nr_hugepages) for hugetlb chunks");
            final ArenaStats fallback = probe(registrar, List.of(PageBacking.THP, PageBacking.SMALL));
            final boolean thp = fallback.pinnedBytes(PageBacking.THP) > 0;
            line(out, thp ? OK : WARN, "pool runs out", "then chunks map as " + fallback.backingMix() +
                " (THP " + thpMode + ")", thp ? null : "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
            return 0;
        }
        catch (final RuntimeException ex)
        {
            line(out, FAIL, "arena backing", "could not map and pin a chunk: " + ex, null);
            return 1;
        }
    }

    /**
     * Opens an arena of one {@link #PROBE_CHUNK} chunk trying {@code backings} in order, maps its chunk (one
     * whole-chunk allocation) and returns its stats; the arena is closed.
     */
    static ArenaStats probe(final Registrar registrar, final List<PageBacking> backings)
    {
        final PinnedArena arena = PinnedArena.open(registrar,
            ArenaConfig.defaults().withChunkSize(PROBE_CHUNK).withCapBytes(PROBE_CHUNK).withBackings(backings));
        try
        {
            final long address = arena.allocate(PROBE_CHUNK);
            final ArenaStats stats = arena.stats();
            arena.free(address);
            return stats;
        }
        finally
        {
            arena.close(true);
        }
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
