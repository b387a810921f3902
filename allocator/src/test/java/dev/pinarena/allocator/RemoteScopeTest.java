package dev.pinarena.allocator;

import dev.pinarena.registration.Access;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Remote buffers live in chunks registered with remote rights, apart from local ones, and are zeroed on free.
 */
class RemoteScopeTest extends ArenaFixture
{
    @Test
    void remoteAndLocalBuffersNeverShareAChunkOrARegion()
    {
        final long local = arena.allocate(4096);
        final long remote = arena.allocateRemote(4096);
        assertNotSame(arena.region(local), arena.region(remote));
        assertTrue(Access.isRemote(arena.region(remote).access()));
        assertEquals(Access.LOCAL_WRITE, arena.region(local).access());
        assertEquals(BufferScope.LOCAL, arena.scopeOf(local));
        assertEquals(BufferScope.REMOTE, arena.scopeOf(remote));
        assertEquals(RemoteKeyMode.NONE, arena.remoteKeyMode());
        assertTrue(arena.remoteKeyReason().contains("io_uring"), arena.remoteKeyReason());
        final NoRemoteKeyException none = assertThrows(NoRemoteKeyException.class, () -> arena.rkey(remote));
        assertTrue(none.getMessage().contains("no remote keys") && none.getMessage().contains("io_uring"),
            none.getMessage());
        final NotRemoteBufferException ex = assertThrows(NotRemoteBufferException.class, () -> arena.rkey(local));
        assertTrue(ex.getMessage().contains(Long.toHexString(local)));
        assertTrue((local & ~(TestArenas.CHUNK - 1)) != (remote & ~(TestArenas.CHUNK - 1)));
        arena.free(local);
        arena.free(remote);
    }

    @Test
    void remoteBuffersAreZeroedOnFreeOnEitherThread() throws Exception
    {
        for (final long size : new long[]{64, 4096, 300_000})
        {
            final long address = arena.allocateRemote(size);
            new UnsafeBuffer(address, (int)size).setMemory(0, (int)size, (byte)0x5A);
            arena.free(address);
            final long again = arena.allocateRemote(size);
            assertEquals(address, again);
            assertAllZero(again, size);

            new UnsafeBuffer(again, (int)size).setMemory(0, (int)size, (byte)0x6B);
            final Thread other = new Thread(() -> arena.free(again));
            other.start();
            other.join();
            arena.reclaimDeadThreads();
            final long third = arena.allocateRemote(size);
            assertAllZero(third, size);
            arena.free(third);
        }
    }

    @Test
    void localBuffersAreNotZeroedByDefault()
    {
        final long address = arena.allocate(64);
        new UnsafeBuffer(address, 64).putLong(0, 0x1234);
        arena.free(address);
        assertEquals(0x1234, new UnsafeBuffer(arena.allocate(64), 64).getLong(0));
    }

    private static void assertAllZero(final long address, final long size)
    {
        final UnsafeBuffer view = new UnsafeBuffer(address, (int)size);
        for (int i = 0; i < size; i += 8)
        {
            assertEquals(0, view.getLong(i), "byte " + i + " of a reused remote buffer");
        }
    }
}
