package dev.pinarena.registration.os;

import dev.pinarena.registration.os.internal.Linux;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PageMapTest
{
    @Test
    void presentPagesHaveDistinctStableFrames()
    {
        final MappedChunk chunk = ChunkMapper.map(2L << 20, List.of(PageBacking.SMALL));
        try (PageMap pageMap = PageMap.open())
        {
            final long[] first = pageMap.frames(chunk.address(), chunk.size());
            final long[] again = pageMap.frames(chunk.address(), chunk.size());
            assertEquals(512, first.length);
            for (int i = 0; i < first.length; i++)
            {
                assertTrue(first[i] > 0, "frame of page " + i);
                assertEquals(first[i], again[i], "frame of page " + i + " moved between two reads");
            }
            assertNotEquals(first[0], first[1], "two pages share a frame");
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void hugetlbPagesAreContiguousFrames()
    {
        final MappedChunk chunk = ChunkMapper.map(2L << 20, List.of(PageBacking.HUGETLB_2M));
        try (PageMap pageMap = PageMap.open())
        {
            final long[] frames = pageMap.frames(chunk.address(), chunk.size());
            for (int i = 1; i < frames.length; i++)
            {
                assertEquals(frames[0] + i, frames[i], "a 2 MiB page is 512 consecutive frames");
            }
            assertEquals(0, frames[0] % 512, "and starts on a 2 MiB physical boundary");
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void anAbsentPageIsReportedNotInvented()
    {
        final long address = Linux.mmap(0, 4096, Linux.PROT_READ | Linux.PROT_WRITE,
            Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS, -1, 0);
        try (PageMap pageMap = PageMap.open())
        {
            final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> pageMap.frame(address));
            assertTrue(ex.getMessage().contains("not present"), ex.getMessage());
        }
        finally
        {
            Linux.libc().munmap(address, 4096);
        }
    }
}
