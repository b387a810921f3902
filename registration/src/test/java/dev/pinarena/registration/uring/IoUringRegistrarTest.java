package dev.pinarena.registration.uring;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.PinLimitExceededException;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.internal.RegisteredRanges;
import dev.pinarena.registration.RegistrarClosedException;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.UnknownRegionException;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.internal.Linux;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.os.MemlockLimit;
import dev.pinarena.registration.os.PageBacking;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IoUringRegistrarTest
{
    private static final long MIB = 1L << 20;

    private IoUringRegistrar registrar;

    @BeforeEach
    void open()
    {
        registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED));
    }

    @AfterEach
    void close()
    {
        registrar.close();
    }

    @Test
    void registeredBytesGoOutThroughTheFixedBuffer()
    {
        for (final PageBacking backing : List.of(PageBacking.SMALL, PageBacking.HUGETLB_2M))
        {
            final MappedChunk chunk = ChunkMapper.map(4 * MIB, List.of(backing));
            final Region region = registrar.register(chunk.address(), chunk.size());
            final byte[] pattern = new byte[8192];
            for (int i = 0; i < pattern.length; i++)
            {
                pattern[i] = (byte)(i * 31 + 7);
            }
            final long at = chunk.address() + 3 * MIB;
            new UnsafeBuffer(at, pattern.length).putBytes(0, pattern);

            assertArrayEquals(pattern, FixedBufferProbe.send(registrar, region, at, pattern.length), backing.label());
            assertEquals(4 * MIB, registrar.pinnedBytes());
            assertSame(region, RegisteredRanges.firstOverlapping(at, 1));

            registrar.deregister(region);
            assertEquals(0, registrar.pinnedBytes());
            chunk.unmap();
        }
    }

    @Test
    void pinIsVisibleToTheKernelAndDropsOnDeregister()
    {
        final long pinnedBefore = MemlockLimit.statusBytes("VmPin");
        final MappedChunk chunk = ChunkMapper.map(8 * MIB, List.of(PageBacking.SMALL));
        final Region region = registrar.register(chunk.address(), chunk.size());
        assertEquals(pinnedBefore + 8 * MIB, MemlockLimit.statusBytes("VmPin"), "VmPin counts io_uring's pin");
        registrar.deregister(region);
        assertEquals(pinnedBefore, MemlockLimit.statusBytes("VmPin"), "pin dropped");
        chunk.unmap();
    }

    @Test
    void regionsOverOneGigabyteSpanSeveralSlots()
    {
        final MappedChunk chunk = ChunkMapper.map(2L << 30, List.of(PageBacking.THP, PageBacking.SMALL));
        try
        {
            final Region small = registrar.register(chunk.address(), 4096);
            final Region big = registrar.register(chunk.address(), chunk.size());
            assertEquals(1, small.slots());
            assertEquals(2, big.slots(), "2 GiB needs two 1 GiB fixed buffers");
            assertNotEquals(small.lkey(), big.lkey());
            final long inSecondGiB = chunk.address() + (1L << 30) + 4096;
            assertEquals(big.handle() + 1, registrar.bufferIndex(big, inSecondGiB));

            new UnsafeBuffer(inSecondGiB, 4).putInt(0, 0xCAFEBABE);
            final byte[] sent = FixedBufferProbe.send(registrar, big, inSecondGiB, 4);
            assertEquals(0xCAFEBABE, new UnsafeBuffer(sent).getInt(0));

            registrar.deregister(big);
            registrar.deregister(small);
            // Freed slots are reused.
            final Region again = registrar.register(chunk.address(), chunk.size());
            assertEquals(small.handle(), again.handle());
            registrar.deregister(again);
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void badInputIsRefusedWithSpecificExceptions()
    {
        final MappedChunk chunk = ChunkMapper.map(2 * MIB, List.of(PageBacking.SMALL));
        try
        {
            assertTrue(assertThrows(IllegalArgumentException.class, () -> registrar.register(chunk.address(), 0))
                .getMessage().contains("length must be positive"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> registrar.register(chunk.address() + 8, 4096))
                .getMessage().contains("not aligned"));
            assertThrows(IllegalArgumentException.class, () -> registrar.register(0, 4096));
            assertTrue(assertThrows(IllegalArgumentException.class,
                () -> registrar.register(chunk.address(), 4096, Access.REMOTE_WRITE))
                .getMessage().contains("require LOCAL_WRITE"));
            assertThrows(IllegalArgumentException.class, () -> registrar.register(chunk.address(), 4096, 1 << 20));

            final Region region = registrar.register(chunk.address(), 4096);
            registrar.deregister(region);
            final UnknownRegionException twice =
                assertThrows(UnknownRegionException.class, () -> registrar.deregister(region));
            assertTrue(twice.getMessage().contains("already deregistered"), twice.getMessage());
            assertEquals(0, registrar.regionCount());
            assertEquals(0, registrar.pinnedBytes());
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void anUnmappedRangeIsNamedAndNothingIsLeft()
    {
        // Just past the x86-64 user address space: nothing can be mapped there (a range unmapped by the test
        // itself could be taken by another thread's mmap before the registration).
        final long hole = 1L << 47;
        final RegistrationException ex =
            assertThrows(RegistrationException.class, () -> registrar.register(hole, 2 * MIB));
        assertEquals("EFAULT", ex.getMessage().replaceAll(".*: (E[A-Z]+) \\(.*", "$1"), ex.getMessage());
        assertTrue(ex.getMessage().contains("not (wholly) mapped"), ex.getMessage());
        assertTrue(ex.getMessage().startsWith("io_uring_register(IORING_REGISTER_BUFFERS_UPDATE)"), ex.getMessage());
        assertEquals(0, registrar.pinnedBytes());
        assertEquals(0, registrar.regionCount());
        // The slot it tried is free again.
        final MappedChunk chunk = ChunkMapper.map(2 * MIB, List.of(PageBacking.SMALL));
        final Region region = registrar.register(chunk.address(), chunk.size());
        assertEquals(0, region.handle());
        registrar.deregister(region);
        chunk.unmap();
    }

    @Test
    void theBudgetRefusesBeforeAnythingIsPinned()
    {
        final long pinnedBefore = MemlockLimit.statusBytes("VmPin");
        final MappedChunk chunk = ChunkMapper.map(8 * MIB, List.of(PageBacking.SMALL));
        try (IoUringRegistrar capped = IoUringRegistrar.open(new PinBudget(6 * MIB)))
        {
            final Region first = capped.register(chunk.address(), 4 * MIB);
            final PinLimitExceededException ex = assertThrows(PinLimitExceededException.class,
                () -> capped.register(chunk.address() + 4 * MIB, 4 * MIB));
            assertEquals(4 * MIB, ex.pinned());
            assertEquals(6 * MIB, ex.cap());
            assertTrue(ex.getMessage().contains("over the cap"), ex.getMessage());
            assertEquals(pinnedBefore + 4 * MIB, MemlockLimit.statusBytes("VmPin"));
            capped.deregister(first);
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void aRegisteredChunkCannotBeUnmapped()
    {
        final MappedChunk chunk = ChunkMapper.map(2 * MIB, List.of(PageBacking.SMALL));
        final Region region = registrar.register(chunk.address() + MIB, 4096);
        final IllegalStateException ex = assertThrows(IllegalStateException.class, chunk::unmap);
        assertTrue(ex.getMessage().contains("still covers it"), ex.getMessage());
        assertTrue(!chunk.isUnmapped());
        registrar.deregister(region);
        chunk.unmap();
    }

    @Test
    void closeDeregistersEverythingAndRefusesLaterUse()
    {
        final long pinnedBefore = MemlockLimit.statusBytes("VmPin");
        final MappedChunk chunk = ChunkMapper.map(4 * MIB, List.of(PageBacking.SMALL));
        final IoUringRegistrar other = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED));
        final Region region = other.register(chunk.address(), chunk.size());
        other.close();
        assertEquals(pinnedBefore, MemlockLimit.statusBytes("VmPin"));
        assertEquals(0, other.pinnedBytes());
        assertTrue(other.isClosed());
        assertThrows(RegistrarClosedException.class, () -> other.register(chunk.address(), 4096));
        assertThrows(RegistrarClosedException.class, () -> other.deregister(region));
        other.close(); // idempotent
        chunk.unmap();
    }

    @Test
    void aRegionOfAnotherRegistrarIsRefused()
    {
        final MappedChunk chunk = ChunkMapper.map(2 * MIB, List.of(PageBacking.SMALL));
        try (IoUringRegistrar other = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            final Region region = other.register(chunk.address(), 4096);
            assertThrows(UnknownRegionException.class, () -> registrar.deregister(region));
            other.deregister(region);
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void sameVirtualAddressAfterMunmapIsDifferentMemory()
    {
        // The hazard this project exists for, at the lowest level: a pinned range is unmapped behind the
        // registrar's back (what an allocator's free() does), the address is mapped again, and the old
        // registration still sends the old pages.
        final long size = 2 * MIB;
        final long address = Linux.mmap(0, size, Linux.PROT_READ | Linux.PROT_WRITE,
            Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | Linux.MAP_POPULATE, -1, 0);
        final Region region = registrar.register(address, size);
        final byte[] old = new byte[4096];
        Arrays.fill(old, (byte)'A');
        new UnsafeBuffer(address, 4096).putBytes(0, old);

        Linux.libc().munmap(address, size);
        // NOREPLACE, never MAP_FIXED: another JVM thread may have got the hole since the munmap, and MAP_FIXED
        // would silently replace its mapping (a SIGSEGV later, anywhere). Fail loudly instead.
        final long again = Linux.mmap(address, size, Linux.PROT_READ | Linux.PROT_WRITE,
            Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | Linux.MAP_FIXED_NOREPLACE | Linux.MAP_POPULATE, -1, 0);
        assertEquals(address, again, "re-map of the hole (errno " + Linux.errno() +
            "; 17 = EEXIST: another mapping took the hole after the munmap, not clobbering it)");
        final byte[] fresh = new byte[4096];
        Arrays.fill(fresh, (byte)'B');
        new UnsafeBuffer(address, 4096).putBytes(0, fresh);

        assertArrayEquals(old, FixedBufferProbe.send(registrar, region, address, 4096),
            "the stale registration still sends the old pages");
        registrar.deregister(region);
        Linux.libc().munmap(address, size);
    }
}
