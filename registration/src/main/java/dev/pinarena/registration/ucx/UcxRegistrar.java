package dev.pinarena.registration.ucx;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import org.openucx.jucx.UcxException;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucs.UcsConstants;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * Registers existing memory with UCX: one {@code ucp_mem_map} (no allocation, memory type host) per region on
 * the caller's {@link UcpContext}, so every transport of that context can use the memory without UCX's own
 * registration cache ever seeing it.
 * <p>
 * A {@link Region} from this registrar has no verbs keys ({@code lkey} = {@code rkey} = 0: UCX keeps one key
 * per memory domain inside its memory handle). Its handle is a slot number: {@link #memory(Region)} returns
 * the region's {@link UcpMemory} (the handle to pass to sends, puts and gets) in O(1), and
 * {@link #packedRemoteKey(Region)} the packed remote key a peer unpacks to reach it, packed once per region
 * and only for regions registered with a remote right.
 * <p>
 * UCX maps memory with every right its transports offer, whatever access is asked for; the remote key is
 * what gates peers, and this registrar hands it out for remote-scope regions only.
 * <p>
 * Threads: registration and deregistration are serialised by {@link Registrar}. {@link #memory(Region)} is
 * safe from any thread that obtained the region through a happens-before edge with its registration (the
 * arena publishes its chunks that way); the slot table is replaced, never mutated in place, when it grows.
 */
public final class UcxRegistrar extends Registrar
{
    /** Backend name. */
    public static final String NAME = "ucx";

    private static final int INITIAL_SLOTS = 16;

    private final UcpContext context;
    private volatile UcpMemory[] memories = new UcpMemory[INITIAL_SLOTS];
    private volatile ByteBuffer[] packedKeys = new ByteBuffer[INITIAL_SLOTS];
    private int[] freeSlots = new int[INITIAL_SLOTS];
    private int freeCount;
    private int usedSlots;
    private long memMapCalls;
    private long memUnmapCalls;

    private UcxRegistrar(final UcpContext context, final PinBudget budget)
    {
        super(NAME, budget);
        this.context = context;
    }

    /**
     * @param context the UCX context whose workers will send from and receive into the regions; stays owned by
     *                the caller (close it after this registrar).
     * @param budget  cap on the bytes this registrar maps.
     * @return the registrar.
     */
    public static UcxRegistrar open(final UcpContext context, final PinBudget budget)
    {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(budget, "budget");
        return new UcxRegistrar(context, budget);
    }

    /**
     * @return the UCX context the regions are mapped on.
     */
    public UcpContext context()
    {
        return context;
    }

    /**
     * The UCX memory handle of a live region of this registrar, in O(1).
     *
     * @param region a live region returned by this registrar.
     * @return its memory handle.
     * @throws IllegalArgumentException if the region is not a live region of this registrar.
     */
    public UcpMemory memory(final Region region)
    {
        final UcpMemory[] table = memories;
        final int slot = slotOf(region);
        final UcpMemory memory = region.owner() == this && slot >= 0 && slot < table.length ? table[slot] : null;
        if (memory == null || memory.getAddress() != region.address())
        {
            throw new IllegalArgumentException(NAME + ": " + region + " is not a live region of this registrar");
        }
        return memory;
    }

    /**
     * The packed remote key of a region registered with a remote right, for a peer to unpack
     * ({@code UcpEndpoint.unpackRemoteKey}). Packed on the first call, then returned as a read-only view.
     *
     * @param region a live region of this registrar.
     * @return a read-only buffer holding the packed key from position 0 to its limit.
     * @throws IllegalArgumentException if the region was registered without a remote right: its key is not
     *                                  handed out.
     *                                  Also if the region is not a live region of this registrar.
     */
    public synchronized ByteBuffer packedRemoteKey(final Region region)
    {
        final UcpMemory memory = memory(region);
        if (!Access.isRemote(region.access()))
        {
            throw new IllegalArgumentException("region 0x" + Long.toHexString(region.address()) + "+" +
                region.length() + " was registered for local access only (" + Access.describe(region.access()) +
                "): its remote key is not handed out");
        }
        final int slot = slotOf(region);
        ByteBuffer key = packedKeys[slot];
        if (key == null)
        {
            final ByteBuffer packed = memory.getRemoteKeyBuffer();
            key = ByteBuffer.allocateDirect(packed.remaining());
            key.put(packed.duplicate()).flip();
            packedKeys[slot] = key;
        }
        return key.asReadOnlyBuffer();
    }

    /**
     * @return how many {@code ucp_mem_map} calls this registrar has made; constant once the arena's working set
     * is mapped.
     */
    public synchronized long memMapCalls()
    {
        return memMapCalls;
    }

    /**
     * @return how many {@code ucp_mem_unmap} calls this registrar has made.
     */
    public synchronized long memUnmapCalls()
    {
        return memUnmapCalls;
    }

    public String description()
    {
        return "ucx ucp_mem_map on an existing range, memory type host (" + context + ")";
    }

    protected Region pin(final long address, final long length, final int access)
    {
        final UcpMemory memory;
        try
        {
            memory = context.memoryMap(new UcpMemMapParams()
                .setAddress(address)
                .setLength(length)
                .setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST));
        }
        catch (final UcxException ex)
        {
            throw new RegistrationException("ucp_mem_map(0x" + Long.toHexString(address) + ", " + length +
                ") failed: " + ex.getMessage());
        }
        memMapCalls++;
        final int slot = takeSlot();
        memories[slot] = memory;
        packedKeys[slot] = null;
        return newRegion(address, length, 0, 0, access, slot, 1);
    }

    protected void unpin(final Region region)
    {
        final int slot = slotOf(region);
        final UcpMemory memory = memories[slot];
        memories[slot] = null;
        packedKeys[slot] = null;
        releaseSlot(slot);
        memUnmapCalls++;
        memory.deregister();
    }

    protected void release()
    {
        // The context belongs to the caller; every region is already unmapped.
    }

    private static int slotOf(final Region region)
    {
        return (int)region.handle();
    }

    private int takeSlot()
    {
        if (freeCount > 0)
        {
            return freeSlots[--freeCount];
        }
        if (usedSlots == memories.length)
        {
            final int grown = memories.length * 2;
            packedKeys = Arrays.copyOf(packedKeys, grown);
            memories = Arrays.copyOf(memories, grown);
            freeSlots = Arrays.copyOf(freeSlots, grown);
        }
        return usedSlots++;
    }

    private void releaseSlot(final int slot)
    {
        freeSlots[freeCount++] = slot;
    }
}
