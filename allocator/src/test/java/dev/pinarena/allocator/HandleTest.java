package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stale handle (its buffer freed and handed out again) throws on free and frees nothing, for blocks,
 * runs and dedicated chunks, on the owner thread and from another thread.
 */
class HandleTest extends ArenaFixture
{
    @Test
    void aStaleFreeThrowsAndTheNewOwnersFreeStillWorks()
    {
        for (final long size : new long[]{64, 4096, 100_000, 300_000, 2 * TestArenas.CHUNK})
        {
            final long first = arena.allocateHandle(size);
            arena.freeHandle(first);
            final long second = arena.allocateHandle(size);
            assertEquals(BufferHandle.address(first), BufferHandle.address(second), size + ": the memory is reused");
            assertNotEquals(BufferHandle.generation(first), BufferHandle.generation(second));
            final StaleHandleException ex = assertThrows(StaleHandleException.class, () -> arena.freeHandle(first),
                size + " B");
            assertTrue(ex.getMessage().contains("handed out again"), ex.getMessage());
            assertEquals(1, arena.stats().buffersInUse(), size + ": the stale free freed nothing");
            arena.freeHandle(second); // the owner's own free is not taken for a double free
            assertEquals(0, arena.stats().buffersInUse());
            assertThrows(DoubleFreeException.class, () -> arena.freeHandle(second), size + ": a plain double free");
        }
    }

    @Test
    void aStaleFreeFromAnotherThreadThrows() throws Exception
    {
        final long first = arena.allocateRemoteHandle(256);
        arena.freeHandle(first);
        final long second = arena.allocateRemoteHandle(256);
        final Throwable[] thrown = new Throwable[1];
        final Thread other = new Thread(() ->
        {
            try
            {
                arena.freeHandle(first);
            }
            catch (final Throwable ex)
            {
                thrown[0] = ex;
            }
        });
        other.start();
        other.join();
        assertTrue(thrown[0] instanceof StaleHandleException, String.valueOf(thrown[0]));
        assertEquals(arena.lkey(BufferHandle.address(second)), arena.lkey(BufferHandle.address(first)));
        arena.freeHandle(second);
        assertEquals(0, arena.stats().buffersInUse());
    }

    @Test
    void aHandleIsItsAddressPlusAGeneration()
    {
        final long handle = arena.allocateHandle(1000);
        final long address = BufferHandle.address(handle);
        assertEquals(0, address % 64);
        assertTrue(arena.usableSize(address) >= 1000);
        arena.free(address); // the plain free accepts the address
        assertThrows(DoubleFreeException.class, () -> arena.freeHandle(handle));
    }
}
