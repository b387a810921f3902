package dev.pinarena.allocator;

import dev.pinarena.registration.RegistrarInUseException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Lifetimes that cannot lie: the registrar outlives the arena, a key is never one of a dead registration,
 * and use after close says so.
 */
class LifetimeTest extends ArenaFixture
{
    @Test
    void theRegistrarRefusesToCloseUnderAnOpenArena()
    {
        final long address = arena.allocate(64);
        final RegistrarInUseException ex = assertThrows(RegistrarInUseException.class, registrar::close);
        assertTrue(ex.getMessage().contains("PinnedArena"), ex.getMessage());
        assertFalse(registrar.isClosed());
        assertTrue(arena.region(address).isLive(), "nothing was deregistered by the refused close");
        assertEquals(arena.region(address).lkey(), arena.lkey(address));
        arena.free(address);
        arena.close();
        registrar.close(); // accepted once the arena is closed
        assertTrue(registrar.isClosed());
    }

    @Test
    void aRegionDeregisteredBehindTheArenasBackGivesNoKey()
    {
        final long address = arena.allocateRemote(4096);
        registrar.deregister(arena.region(address));
        assertThrows(RegistrationGoneException.class, () -> arena.lkey(address));
        assertThrows(RegistrationGoneException.class, () -> arena.rkey(address));
        assertThrows(RegistrationGoneException.class, () -> arena.region(address));
    }

    @Test
    void keysAfterCloseSayTheArenaIsClosed()
    {
        final long address = arena.allocate(64);
        final PinnedBuffer buffer = arena.allocate(128, new PinnedBuffer());
        arena.close(true);
        assertThrows(ArenaClosedException.class, () -> arena.lkey(address));
        assertThrows(ArenaClosedException.class, () -> arena.usableSize(address));
        assertThrows(ArenaClosedException.class, buffer::lkey);
    }

    @Test
    void atTheCapTheMessageNamesTheSizeAskedFor()
    {
        // The cap is 64 MiB of 4 MiB chunks: fill every chunk with whole-chunk runs.
        for (int i = 0; i < capBytes() / TestArenas.CHUNK; i++)
        {
            arena.allocate(TestArenas.CHUNK);
        }
        final ArenaExhaustedException ex = assertThrows(ArenaExhaustedException.class, () -> arena.allocate(64));
        assertTrue(ex.getMessage().startsWith("cannot allocate 64 bytes"), ex.getMessage());
    }
}
