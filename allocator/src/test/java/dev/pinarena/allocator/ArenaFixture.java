package dev.pinarena.allocator;

import dev.pinarena.registration.uring.IoUringRegistrar;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Tests that need one arena over an io_uring registrar, opened before each test and force-closed after.
 */
abstract class ArenaFixture
{
    protected IoUringRegistrar registrar;
    protected PinnedArena arena;

    @BeforeEach
    void openArena()
    {
        registrar = TestArenas.registrar();
        arena = PinnedArena.open(registrar, TestArenas.config(capBytes()));
    }

    /**
     * @return the arena's cap; tests that reach it on purpose choose a smaller one.
     */
    protected long capBytes()
    {
        return 64L << 20;
    }

    @AfterEach
    void closeArena()
    {
        arena.close(true);
        registrar.close();
    }
}
