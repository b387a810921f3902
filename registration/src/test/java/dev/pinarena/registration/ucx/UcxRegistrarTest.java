package dev.pinarena.registration.ucx;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ucx backend on the host (UCX's shared-memory and tcp memory domains; no RDMA device needed).
 */
class UcxRegistrarTest
{
    private static final long PAGE = 4096;

    private UcpContext context;
    private UcxRegistrar registrar;
    private ByteBuffer memory;
    private long base;

    @BeforeEach
    void open()
    {
        context = new UcpContext(new UcpParams().requestAmFeature().requestRmaFeature());
        registrar = UcxRegistrar.open(context, new PinBudget(PinBudget.UNLIMITED));
        memory = ByteBuffer.allocateDirect((int)(PAGE * 9));
        base = (UcxUtils.getAddress(memory) + PAGE - 1) & ~(PAGE - 1);
    }

    @AfterEach
    void close()
    {
        registrar.close();
        context.close();
    }

    @Test
    void mapsExistingMemoryOncePerRegionAndFindsItsHandleFromTheRegion()
    {
        final Region local = registrar.register(base, 4 * PAGE, Access.LOCAL_WRITE);
        final Region remote = registrar.register(base + 4 * PAGE, 4 * PAGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE);

        final UcpMemory localMemory = registrar.memory(local);
        assertEquals(base, localMemory.getAddress());
        assertEquals(4 * PAGE, localMemory.getLength());
        assertEquals(base + 4 * PAGE, registrar.memory(remote).getAddress());
        assertNotSame(localMemory, registrar.memory(remote));
        assertSame(localMemory, registrar.memory(local));
        assertEquals(2, registrar.memMapCalls());
        assertEquals(2, registrar.regionCount());
    }

    @Test
    void handsOutAPackedKeyForRemoteRegionsOnlyAndPacksItOnce()
    {
        final Region local = registrar.register(base, 4 * PAGE, Access.LOCAL_WRITE);
        final Region remote = registrar.register(base + 4 * PAGE, 4 * PAGE, Access.LOCAL_WRITE | Access.REMOTE_READ);

        final ByteBuffer key = registrar.packedRemoteKey(remote);
        assertTrue(key.remaining() > 0, "packed key is empty");
        assertEquals(key, registrar.packedRemoteKey(remote));
        final IllegalArgumentException refused =
            assertThrows(IllegalArgumentException.class, () -> registrar.packedRemoteKey(local));
        assertTrue(refused.getMessage().contains("local access only"), refused.getMessage());
    }

    @Test
    void deregistrationUnmapsAndForgetsTheHandle()
    {
        final Region region = registrar.register(base, 8 * PAGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        registrar.deregister(region);

        assertEquals(1, registrar.memUnmapCalls());
        assertEquals(0, registrar.regionCount());
        assertThrows(IllegalArgumentException.class, () -> registrar.memory(region));
        assertThrows(IllegalArgumentException.class, () -> registrar.packedRemoteKey(region));

        final Region again = registrar.register(base, 8 * PAGE, Access.LOCAL_WRITE);
        assertEquals(base, registrar.memory(again).getAddress());
        assertEquals(2, registrar.memMapCalls());
    }
}
