package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SizeClassesTest
{
    @Test
    void spacingIsAtMostOneEighthAbove128BytesWithA16ByteGranule()
    {
        final SizeClasses classes = new SizeClasses(16);
        for (int c = 1; c < classes.count(); c++)
        {
            final int below = classes.blockSize(c - 1);
            final int size = classes.blockSize(c);
            if (below >= 128)
            {
                assertTrue((size - below) * 8 <= below, "step " + below + " -> " + size);
            }
        }
    }

    @Test
    void defaultGranuleStepsByOneCacheLineOrOneEighth()
    {
        final SizeClasses classes = new SizeClasses(64);
        for (int c = 0; c < classes.count(); c++)
        {
            final int size = classes.blockSize(c);
            assertEquals(0, size % 64, "every block 64-byte aligned: " + size);
            if (c > 0)
            {
                final int below = classes.blockSize(c - 1);
                assertTrue(size - below <= Math.max(64, below / 8), "step " + below + " -> " + size);
            }
        }
    }

    @Test
    void everySizeMapsToTheSmallestFittingClassWithBoundedWaste()
    {
        for (final int granule : new int[]{16, 64})
        {
            final SizeClasses classes = new SizeClasses(granule);
            for (int size = 1; size <= SizeClasses.MAX_SLAB_BLOCK; size++)
            {
                final int cls = classes.classOf(size);
                final int block = classes.blockSize(cls);
                assertTrue(block >= size);
                assertTrue(cls == 0 || classes.blockSize(cls - 1) < size);
                assertTrue(block - size < Math.max(granule, size / 8 + 1), size + " -> " + block);
            }
        }
    }

    @Test
    void slabsHoldAtLeastEightBlocksAndTheReciprocalDividesExactly()
    {
        final SizeClasses classes = new SizeClasses(64);
        for (int c = 0; c < classes.count(); c++)
        {
            assertTrue(classes.blocksPerSlab(c) >= SizeClasses.MIN_BLOCKS_PER_SLAB);
            final long span = (long)classes.slabPages(c) * SizeClasses.ARENA_PAGE_SIZE;
            final int size = classes.blockSize(c);
            for (long offset = 0; offset < span; offset += 61)
            {
                assertEquals(offset / size, (offset * classes.reciprocal(c)) >>> SizeClasses.RECIPROCAL_SHIFT);
            }
        }
    }

    @Test
    void alignedClassHasBlocksThatAreMultiplesOfTheAlignment()
    {
        final SizeClasses classes = new SizeClasses(64);
        for (int alignment = 64; alignment <= SizeClasses.ARENA_PAGE_SIZE; alignment <<= 1)
        {
            final int cls = classes.alignedClass(classes.classOf(100), alignment);
            assertEquals(0, classes.blockSize(cls) % alignment);
        }
    }
}
