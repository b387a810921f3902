package dev.pinarena.registration.uring;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.os.MemlockLimit;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.BitSet;

/**
 * Pins memory as io_uring fixed buffers: a real long-term kernel pin (the pages cannot move or be freed
 * while registered) on any Linux with io_uring, no RDMA hardware needed.
 * <p>
 * A region occupies one slot of the ring's buffer table per started GiB (the kernel caps one fixed buffer
 * at 1 GiB), in consecutive slots. Its {@code lkey}, {@code rkey} and {@code handle} are the first slot's
 * index: the {@code buf_index} a READ_FIXED / WRITE_FIXED names ({@link #bufferIndex(Region, long)} finds
 * the slot of any address). There are no remote keys: a peer cannot use these.
 */
public final class IoUringRegistrar extends Registrar
{
    /** Registrar name. */
    public static final String NAME = "io_uring";

    private final IoUring ring;
    private final BitSet usedSlots = new BitSet(IoUring.MAX_BUFFERS);
    private final int slotCount;
    private final ByteBuffer iovecs;
    private final UnsafeBuffer iovecView;

    private IoUringRegistrar(final IoUring ring, final int slotCount, final PinBudget budget)
    {
        super(NAME, budget);
        this.ring = ring;
        this.slotCount = slotCount;
        this.iovecs = ByteBuffer.allocateDirect(slotCount * IoUring.IOVEC_SIZE).order(ByteOrder.nativeOrder());
        this.iovecView = new UnsafeBuffer(iovecs);
    }

    /**
     * Opens a ring with the largest buffer table the kernel allows and a budget from RLIMIT_MEMLOCK.
     *
     * @return the registrar.
     */
    public static IoUringRegistrar open()
    {
        return open(MemlockLimit.read().defaultBudget());
    }

    /**
     * @param budget cap on pinned bytes.
     * @return the registrar.
     * @throws RegistrationException if the kernel has no usable io_uring.
     */
    public static IoUringRegistrar open(final PinBudget budget)
    {
        return open(budget, IoUring.MAX_BUFFERS);
    }

    /**
     * @param budget    cap on pinned bytes.
     * @param slotCount buffer-table size (one slot per started GiB of each region).
     * @return the registrar.
     */
    public static IoUringRegistrar open(final PinBudget budget, final int slotCount)
    {
        if (slotCount < 1 || slotCount > IoUring.MAX_BUFFERS)
        {
            throw new IllegalArgumentException("slot count must be 1.." + IoUring.MAX_BUFFERS + ": " + slotCount);
        }
        final IoUring ring = IoUring.open(4);
        try
        {
            ring.registerSparseBufferTable(slotCount);
        }
        catch (final RuntimeException ex)
        {
            ring.close();
            throw ex;
        }
        return new IoUringRegistrar(ring, slotCount, budget);
    }

    /**
     * @return the ring, for fixed-buffer I/O that proves what a region pins.
     */
    public IoUring ring()
    {
        return ring;
    }

    /**
     * @param region  a live region of this registrar.
     * @param address an address inside it.
     * @return the fixed-buffer index that covers {@code address}.
     */
    public int bufferIndex(final Region region, final long address)
    {
        if (!region.covers(address, 1))
        {
            throw new IllegalArgumentException("0x" + Long.toHexString(address) + " is outside " + region);
        }
        return (int)region.handle() + (int)((address - region.address()) / IoUring.MAX_BUFFER_BYTES);
    }

    /**
     * @return slots in the buffer table.
     */
    public int slotCount()
    {
        return slotCount;
    }

    public String description()
    {
        return "io_uring fixed buffers (ring fd " + ring.fd() + ", " + slotCount + " slots of up to 1 GiB)";
    }

    protected Region pin(final long address, final long length, final int access)
    {
        final int slots = (int)((length + IoUring.MAX_BUFFER_BYTES - 1) / IoUring.MAX_BUFFER_BYTES);
        final int first = findFreeRun(slots);
        if (first < 0)
        {
            throw new RegistrationException("io_uring buffer table: no " + slots + " consecutive free slots of " +
                slotCount + " (" + usedSlots.cardinality() + " used)");
        }
        for (int i = 0; i < slots; i++)
        {
            final long offset = (long)i * IoUring.MAX_BUFFER_BYTES;
            iovecView.putLong(i * IoUring.IOVEC_SIZE, address + offset);
            iovecView.putLong(i * IoUring.IOVEC_SIZE + 8, Math.min(IoUring.MAX_BUFFER_BYTES, length - offset));
        }
        final int result = ring.updateBuffers(first, BufferUtil.address(iovecs), slots);
        if (result < 0)
        {
            // The kernel applies an update slot by slot and stops at the first failure: empty them all again.
            clearSlots(first, slots);
            final int errno = -result;
            throw new RegistrationException(
                "io_uring_register(IORING_REGISTER_BUFFERS_UPDATE) of 0x" + Long.toHexString(address) + "+" + length,
                errno, hint(errno));
        }
        usedSlots.set(first, first + slots);
        return newRegion(address, length, first, first, access, first, slots);
    }

    protected void unpin(final Region region)
    {
        final int first = (int)region.handle();
        final int result = clearSlots(first, region.slots());
        if (result < 0)
        {
            throw new RegistrationException("io_uring_register(IORING_REGISTER_BUFFERS_UPDATE) clearing slots of " + region,
                -result, null);
        }
        usedSlots.clear(first, first + region.slots());
    }

    protected void release()
    {
        ring.close();
    }

    private int clearSlots(final int first, final int slots)
    {
        iovecView.setMemory(0, slots * IoUring.IOVEC_SIZE, (byte)0);
        return ring.updateBuffers(first, BufferUtil.address(iovecs), slots);
    }

    private int findFreeRun(final int slots)
    {
        int start = usedSlots.nextClearBit(0);
        while (start + slots <= slotCount)
        {
            final int nextUsed = usedSlots.nextSetBit(start);
            if (nextUsed < 0 || nextUsed >= start + slots)
            {
                return start;
            }
            start = usedSlots.nextClearBit(nextUsed);
        }
        return -1;
    }

    private static String hint(final int errno)
    {
        switch (errno)
        {
            case 12:
                return "the pin would pass RLIMIT_MEMLOCK: raise ulimit -l or grant CAP_IPC_LOCK";
            case 14:
                return "the range is not (wholly) mapped in this process";
            case 95:
                return "io_uring cannot pin this kind of memory (file-backed or special mapping)";
            case 22:
                return "the range is not acceptable to io_uring (too large, or not anonymous/hugetlb memory)";
            default:
                return null;
        }
    }
}
