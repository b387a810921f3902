package dev.pinarena.cli;

import dev.pinarena.allocator.ArenaStats;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.os.HugePagePools;
import dev.pinarena.registration.os.PageBacking;
import dev.pinarena.registration.uring.IoUringRegistrar;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The doctor's backing lines come from a real arena: a chunk mapped with the host's hugetlb pool, and one
 * mapped as when the pool has run out.
 */
class DoctorTest
{
    @Test
    void aProbeChunkTakesHugetlbPagesWhileThePoolHasThem()
    {
        final long free = freeTwoMegabytePages();
        assertTrue(free >= 2, "the suite needs free 2 MiB hugepages (./pinarena reserves them); free: " + free);
        try (IoUringRegistrar registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            final ArenaStats stats = Doctor.probe(registrar, List.of(PageBacking.HUGETLB_2M, PageBacking.THP));
            assertEquals(Doctor.PROBE_CHUNK, stats.pinnedBytes(PageBacking.HUGETLB_2M), stats.backingMix());
            assertEquals("hugetlb-2m 4 MiB", stats.backingMix());
        }
    }

    @Test
    void withoutTheHugetlbPoolAChunkFallsBackToTransparentHugePages()
    {
        final String mode = HugePagePools.transparentHugePageMode();
        try (IoUringRegistrar registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            final ArenaStats stats = Doctor.probe(registrar, List.of(PageBacking.THP, PageBacking.SMALL));
            final PageBacking expected = "never".equals(mode) || "unsupported".equals(mode) ?
                PageBacking.SMALL : PageBacking.THP;
            assertEquals(Doctor.PROBE_CHUNK, stats.pinnedBytes(expected), "THP " + mode + ": " + stats.backingMix());
            assertEquals(Doctor.PROBE_CHUNK, stats.pinnedBytes(), stats.backingMix());
        }
    }

    @Test
    void doctorPrintsTheBackingAnArenaGetsAndTheFallback()
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int status = Doctor.run(new PrintStream(out, true, StandardCharsets.UTF_8));
        final String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, text);
        assertTrue(text.matches("(?s).*\\] arena backing +a chunk maps as (hugetlb-1g|hugetlb-2m|thp|4k) 4 MiB\n.*"),
            text);
        assertTrue(text.matches("(?s).*\\] pool runs out +then chunks map as (thp|4k) 4 MiB \\(THP [a-z]+\\)\n.*"),
            text);
        // which remote-key mode this machine would use, and why
        final String keys = dev.pinarena.registration.verbs.VerbsProbe.probe().available() ?
            "(?s).*\\] remote keys +(window: a memory window bound to exactly each remote buffer|mr: a registration " +
                "of exactly each remote buffer, deregistered on free \\(.*memory windows unavailable: .+\\)).*" :
            "(?s).*\\] remote keys +none per buffer: no RDMA device .*io_uring and mlock pin memory but make no keys.*";
        assertTrue(text.matches(keys), text);
    }

    private static long freeTwoMegabytePages()
    {
        for (final HugePagePools.Pool pool : HugePagePools.pools())
        {
            if (pool.pageSize() == 2L << 20)
            {
                return pool.free();
            }
        }
        return 0;
    }
}
