package dev.pinarena.allocator;

import dev.pinarena.registration.verbs.VerbsRegistrar;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keys that come back: a freed remote buffer's window key is not issued again for at least 2^20 binds in the
 * process, counted over rxe0 (testbed/softroce). The Java twin of the C case
 * {@code remote_window_key_not_reissued_for_2p20_binds} ({@code bindings-c/tests/remote/test_remote.c}): the
 * arena's windows come from the same pool ({@code libpinarena-windows.so} builds {@code window.c}).
 * <p>
 * {@value #ROUNDS} allocate/free rounds, two binds each (bind, revoke): no key repeats, and every window that
 * comes back does so after at least 4096 other allocations with its 8-bit key advanced by exactly the two
 * binds of its use, so the key itself recurs only after 128 uses of the window: at least 4096 x 256 = 2^20
 * binds. The window bounds probe is skipped, as on hardware that passes it (rdma_rxe fails it).
 */
@Tag("softroce")
class WindowKeyReuseSoftRoceTest
{
    private static final int ROUNDS = 12_000;
    private static final int SIZE = 1000;
    private static final long BINDS_PER_ROUND = 2;
    private static final int KEY_BITS = 8;
    private static final long DISTANCE = 1L << 20;

    private VerbsRegistrar registrar;
    private PinnedArena arena;

    @AfterEach
    void close()
    {
        if (arena != null)
        {
            arena.close(true);
        }
        if (registrar != null)
        {
            registrar.close();
        }
    }

    @Test
    void aFreedBuffersWindowKeyIsNotIssuedAgainFor2p20Binds()
    {
        registrar = SoftRoceRegistrar.open();
        System.setProperty(ExposedKeys.WINDOW_PROBE_PROPERTY, "false");
        try
        {
            arena = PinnedArena.open(registrar, TestArenas.config(64L << 20).withRemoteKeys(RemoteKeyMode.WINDOW));
            assertEquals(RemoteKeyMode.WINDOW, arena.remoteKeyMode(), arena.remoteKeyReason());
        }
        finally
        {
            System.clearProperty(ExposedKeys.WINDOW_PROBE_PROPERTY);
        }

        final Set<Integer> issued = new HashSet<>();
        final Map<Integer, int[]> lastUse = new HashMap<>();    // window index -> {round, key}
        long minGap = Long.MAX_VALUE;
        int reuses = 0;
        for (int round = 0; round < ROUNDS; round++)
        {
            final long buffer = arena.allocateRemote(SIZE);
            final int key = arena.rkey(buffer);
            assertTrue(issued.add(key), "round " + round + ": key 0x" + Integer.toHexString(key) +
                " issued again (it was issued before in this run)");
            final int window = key >>> KEY_BITS;
            final int[] last = lastUse.get(window);
            if (last != null)
            {
                minGap = Math.min(minGap, round - last[0]);
                assertEquals(BINDS_PER_ROUND, (key - last[1]) & 0xff, "window 0x" + Integer.toHexString(window) +
                    ": key 0x" + Integer.toHexString(key) + " after 0x" + Integer.toHexString(last[1]) +
                    " (want the two binds' step)");
                reuses++;
            }
            lastUse.put(window, new int[] {round, key});
            arena.free(buffer);
        }
        final long keyUses = 1L << KEY_BITS >>> 1;                // uses of a window before its key wraps: 128
        System.out.println(ROUNDS + " rounds: no key repeated; " + reuses + " window reuses, the closest " + minGap +
            " allocations apart (key distance >= " + minGap + " x " + keyUses + " allocations = " +
            minGap * keyUses * BINDS_PER_ROUND + " binds)");
        assertTrue(reuses > 0, "no window was reused in " + ROUNDS + " rounds: the distance was not exercised");
        assertTrue(minGap * keyUses * BINDS_PER_ROUND >= DISTANCE, "a window came back after " + minGap +
            " allocations: its key recurs after " + minGap * keyUses * BINDS_PER_ROUND + " binds, fewer than 2^20");
    }
}
