package dev.pinarena.registration.os;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChunkMapperTest
{
    private static final long MIB = 1L << 20;

    @ParameterizedTest
    @ValueSource(longs = {2 * MIB, 4 * MIB, 64 * MIB})
    void chunksAreAlignedToTheirSizeAndPopulated(final long size)
    {
        final MappedChunk chunk = ChunkMapper.map(size, List.of(PageBacking.SMALL));
        try (PageMap pageMap = PageMap.open())
        {
            assertEquals(0, chunk.address() & (size - 1), "chunk base must be a multiple of its size: " + chunk);
            assertEquals(size, chunk.size());
            // Populated up front: every page already has a frame, no fault on first use.
            assertEquals(size / 4096, pageMap.frames(chunk.address(), size).length);
            assertEquals(4096, chunk.kernelPageSize());
            assertEquals(0, chunk.hugeBytes(), "4k backing asked for no huge pages: " + chunk);
            assertEquals(4096, chunk.effectivePageSize());
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void hugetlbChunkGetsTwoMegabytePagesWhenThePoolHasThem()
    {
        assertTrue(HugePagePool.free() >= 2,
            "this test needs free 2 MiB hugepages: echo 512 > /proc/sys/vm/nr_hugepages (.ci/run does it)");
        // This process's own hugetlb bytes, not the pool's free count: other processes may take or give back
        // pool pages meanwhile (a busy CI host once moved it by 6 pages during this test).
        final long heldBefore = HugePagePool.heldByThisProcess();
        final MappedChunk chunk = ChunkMapper.map(4 * MIB, List.of(PageBacking.HUGETLB_2M, PageBacking.SMALL));
        try
        {
            assertEquals(PageBacking.HUGETLB_2M, chunk.backing(), "fallbacks: " + chunk.fallbacks());
            assertEquals(2 * MIB, chunk.kernelPageSize(), "read back from smaps");
            assertEquals(2 * MIB, chunk.effectivePageSize());
            assertEquals(heldBefore + 4 * MIB, HugePagePool.heldByThisProcess(), "two pages taken from the pool up front");
        }
        finally
        {
            chunk.unmap();
        }
        assertEquals(heldBefore, HugePagePool.heldByThisProcess(), "pages given back at unmap");
    }

    @Test
    void fallsBackToSmallPagesWhenThePoolIsEmpty()
    {
        final long total = HugePagePool.total();
        // Shrink the pool to the pages in use, so none is free, and restore it afterwards.
        HugePagePool.setTotal(total - HugePagePool.free());
        try
        {
            assertEquals(0, HugePagePool.free());
            final MappedChunk chunk = ChunkMapper.map(4 * MIB, List.of(PageBacking.HUGETLB_2M, PageBacking.SMALL));
            try
            {
                assertEquals(PageBacking.SMALL, chunk.backing());
                assertEquals(4096, chunk.kernelPageSize());
                assertEquals(1, chunk.fallbacks().size());
                assertTrue(chunk.fallbacks().get(0).startsWith("hugetlb-2m: mmap(MAP_HUGETLB) failed"),
                    chunk.fallbacks().toString());
                assertTrue(chunk.fallbacks().get(0).contains("nr_hugepages"), "says how to fix it");
            }
            finally
            {
                chunk.unmap();
            }
        }
        finally
        {
            HugePagePool.setTotal(total);
        }
    }

    @Test
    void oneGigabytePagesArePassedOverForSmallChunks()
    {
        final MappedChunk chunk = ChunkMapper.map(2 * MIB, List.of(PageBacking.HUGETLB_1G, PageBacking.SMALL));
        try
        {
            assertEquals(PageBacking.SMALL, chunk.backing());
            assertTrue(chunk.fallbacks().get(0).contains("page larger than"), chunk.fallbacks().toString());
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void transparentHugePagesAreReadBackFromTheKernel()
    {
        final MappedChunk chunk = ChunkMapper.map(8 * MIB, List.of(PageBacking.THP));
        try
        {
            assertEquals(4096, chunk.kernelPageSize(), "THP mappings report 4 kB KernelPageSize");
            // With 20+ GiB free and THP in madvise mode the kernel backs an aligned, madvised range with
            // huge pages; the count comes from /proc/kpageflags, not from what was asked.
            assertTrue(chunk.hugeBytes() > 0, "no transparent huge page read back for " + chunk);
            assertEquals(0, chunk.hugeBytes() % (2 * MIB));
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void badSizesAreRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> ChunkMapper.map(3 * MIB));
        assertThrows(IllegalArgumentException.class, () -> ChunkMapper.map(MIB));
        assertThrows(IllegalArgumentException.class, () -> ChunkMapper.map(0));
        assertThrows(IllegalArgumentException.class, () -> ChunkMapper.map(2 * MIB, List.of()));
    }

    @Test
    void unmapTwiceIsRefused()
    {
        final MappedChunk chunk = ChunkMapper.map(2 * MIB, List.of(PageBacking.SMALL));
        chunk.unmap();
        assertThrows(IllegalStateException.class, chunk::unmap);
    }
}
