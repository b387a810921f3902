package dev.pinarena.registration.uring;

import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.os.internal.LibC;
import dev.pinarena.registration.os.internal.Linux;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A minimal io_uring instance driven by raw system calls: setup, a sparse fixed-buffer table, and
 * synchronous submission of READ_FIXED / WRITE_FIXED.
 * <p>
 * The fixed-buffer table is what the io_uring registrar pins with: the kernel pins the pages of a registered
 * buffer long-term (FOLL_PIN | FOLL_LONGTERM, as ibv_reg_mr does) and charges them to RLIMIT_MEMLOCK. The I/O
 * operations exist so tests and the demo can prove which physical pages a registration holds: a
 * WRITE_FIXED sends the bytes of the pinned pages, whatever the virtual mapping shows now.
 * <p>
 * Layouts mirror {@code linux/io_uring.h}. Not thread safe for I/O: callers serialise (the registrar's lock,
 * or a single test thread).
 * <p>
 * <b>Twin</b>: {@code bindings-c/src/uring.c} implements the same rules in C. Change both, and keep the shared
 * scenario list in docs/ARCHITECTURE.md ("Twins") true of both test suites.
 */
final class IoUring implements AutoCloseable
{
    /** io_uring_register opcode: register a buffer table (with RSRC_REGISTER_SPARSE: empty slots). Linux 5.13+. */
    public static final int IORING_REGISTER_BUFFERS2 = 15;
    /** io_uring_register opcode: replace slots of the buffer table. Linux 5.13+. */
    public static final int IORING_REGISTER_BUFFERS_UPDATE = 16;
    /** io_uring_register opcode: drop the whole buffer table. */
    public static final int IORING_UNREGISTER_BUFFERS = 1;
    /** Flag of struct io_uring_rsrc_register: create the table with every slot empty. Linux 5.19+. */
    public static final int IORING_RSRC_REGISTER_SPARSE = 1;
    /** io_uring_enter flag: wait for completions. */
    public static final int IORING_ENTER_GETEVENTS = 1;
    /** Feature bit: SQ and CQ rings share one mapping. */
    public static final int IORING_FEAT_SINGLE_MMAP = 1;
    /** Opcode: read into a fixed buffer. */
    public static final byte IORING_OP_READ_FIXED = 4;
    /** Opcode: write from a fixed buffer. */
    public static final byte IORING_OP_WRITE_FIXED = 5;
    /** The kernel's cap on one fixed buffer. */
    public static final long MAX_BUFFER_BYTES = 1L << 30;
    /** The kernel's cap on the number of fixed buffers in a ring (IORING_MAX_REG_BUFFERS). */
    public static final int MAX_BUFFERS = 1 << 14;

    private static final long IORING_OFF_SQ_RING = 0L;
    private static final long IORING_OFF_CQ_RING = 0x8000000L;
    private static final long IORING_OFF_SQES = 0x10000000L;

    // struct io_uring_params (120 bytes)
    private static final int PARAMS_SIZE = 120;
    private static final int P_SQ_ENTRIES = 0;
    private static final int P_CQ_ENTRIES = 4;
    private static final int P_FEATURES = 20;
    private static final int P_SQ_OFF = 40;
    private static final int P_CQ_OFF = 80;
    // struct io_sqring_offsets / io_cqring_offsets, relative to P_SQ_OFF / P_CQ_OFF
    private static final int OFF_HEAD = 0;
    private static final int OFF_TAIL = 4;
    private static final int OFF_RING_MASK = 8;
    private static final int SQ_OFF_ARRAY = 24;
    private static final int CQ_OFF_CQES = 20;
    // struct io_uring_sqe (64 bytes)
    private static final int SQE_SIZE = 64;
    private static final int SQE_OPCODE = 0;
    private static final int SQE_FD = 4;
    private static final int SQE_OFF = 8;
    private static final int SQE_ADDR = 16;
    private static final int SQE_LEN = 24;
    private static final int SQE_USER_DATA = 32;
    private static final int SQE_BUF_INDEX = 40;
    // struct io_uring_cqe (16 bytes)
    private static final int CQE_SIZE = 16;
    private static final int CQE_RES = 8;
    // struct io_uring_rsrc_register (32 bytes) and io_uring_rsrc_update2 (32 bytes)
    private static final int RSRC_SIZE = 32;
    // struct iovec
    /** Bytes of one struct iovec. */
    public static final int IOVEC_SIZE = 16;

    private final LibC libc = Linux.libc();
    private final int fd;
    private final int entries;
    private final long sqRing;
    private final long sqRingSize;
    private final long cqRing;
    private final long cqRingSize;
    private final long sqes;
    private final long sqesSize;
    private final UnsafeBuffer sq = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer cq = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer sqe = new UnsafeBuffer(0, 0);
    private final int sqHead;
    private final int sqTail;
    private final int sqMask;
    private final int sqArray;
    private final int cqHead;
    private final int cqTail;
    private final int cqMask;
    private final int cqes;
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(RSRC_SIZE).order(ByteOrder.nativeOrder());
    private final UnsafeBuffer scratchView = new UnsafeBuffer(scratch);
    private boolean closed;

    private IoUring(final int entries)
    {
        final ByteBuffer params = ByteBuffer.allocateDirect(PARAMS_SIZE).order(ByteOrder.nativeOrder());
        final long result = libc.syscall(
            Linux.SYS_IO_URING_SETUP, entries, BufferUtil.address(params), 0, 0, 0, 0);
        if (result < 0)
        {
            final int errno = Linux.errno();
            throw new RegistrationException("io_uring_setup", errno, setupHint(errno));
        }
        fd = (int)result;
        this.entries = params.getInt(P_SQ_ENTRIES);
        final int cqEntries = params.getInt(P_CQ_ENTRIES);
        final boolean singleMmap = (params.getInt(P_FEATURES) & IORING_FEAT_SINGLE_MMAP) != 0;

        sqHead = params.getInt(P_SQ_OFF + OFF_HEAD);
        sqTail = params.getInt(P_SQ_OFF + OFF_TAIL);
        sqMask = params.getInt(P_SQ_OFF + OFF_RING_MASK);
        sqArray = params.getInt(P_SQ_OFF + SQ_OFF_ARRAY);
        cqHead = params.getInt(P_CQ_OFF + OFF_HEAD);
        cqTail = params.getInt(P_CQ_OFF + OFF_TAIL);
        cqMask = params.getInt(P_CQ_OFF + OFF_RING_MASK);
        cqes = params.getInt(P_CQ_OFF + CQ_OFF_CQES);

        long sqSize = sqArray + (long)this.entries * 4;
        final long cqSize = cqes + (long)cqEntries * CQE_SIZE;
        if (singleMmap)
        {
            sqSize = Math.max(sqSize, cqSize);
        }
        sqRingSize = sqSize;
        sqRing = mapRing(sqRingSize, IORING_OFF_SQ_RING);
        if (singleMmap)
        {
            cqRing = sqRing;
            cqRingSize = 0;
        }
        else
        {
            cqRingSize = cqSize;
            cqRing = mapRing(cqRingSize, IORING_OFF_CQ_RING);
        }
        sqesSize = (long)this.entries * SQE_SIZE;
        sqes = mapRing(sqesSize, IORING_OFF_SQES);
        sq.wrap(sqRing, (int)sqRingSize);
        cq.wrap(cqRing, (int)(singleMmap ? sqRingSize : cqRingSize));
        sqe.wrap(sqes, (int)sqesSize);
    }

    /**
     * @param entries submission queue size (a power of two is used by the kernel).
     * @return a new ring.
     * @throws RegistrationException if the kernel refuses io_uring (the message says why and what to do).
     */
    public static IoUring open(final int entries)
    {
        return new IoUring(entries);
    }

    /**
     * @return the ring's file descriptor.
     */
    public int fd()
    {
        return fd;
    }

    /**
     * Creates an empty fixed-buffer table of {@code slots} slots.
     *
     * @param slots table size, at most {@link #MAX_BUFFERS}.
     */
    public synchronized void registerSparseBufferTable(final int slots)
    {
        scratchView.setMemory(0, RSRC_SIZE, (byte)0);
        scratchView.putInt(0, slots);                                   // nr
        scratchView.putInt(4, IORING_RSRC_REGISTER_SPARSE);             // flags
        final long result = libc.syscall(
            Linux.SYS_IO_URING_REGISTER, fd, IORING_REGISTER_BUFFERS2, BufferUtil.address(scratch), RSRC_SIZE, 0, 0);
        if (result < 0)
        {
            final int errno = Linux.errno();
            throw new RegistrationException("io_uring_register(IORING_REGISTER_BUFFERS2, sparse " + slots + ")", errno,
                errno == 22 ? "this kernel lacks sparse buffer tables (needs Linux 5.19+)" : null);
        }
    }

    /**
     * Replaces {@code count} consecutive slots of the buffer table with the given iovecs. An iovec of
     * {0, 0} empties a slot, which drops the kernel's pin on its pages.
     *
     * @param firstSlot first slot.
     * @param iovecs    address of {@code count} struct iovec.
     * @param count     slots to replace.
     * @return 0, or a negative errno.
     */
    public synchronized int updateBuffers(final int firstSlot, final long iovecs, final int count)
    {
        scratchView.setMemory(0, RSRC_SIZE, (byte)0);
        scratchView.putInt(0, firstSlot);         // offset
        scratchView.putLong(8, iovecs);           // data
        scratchView.putLong(16, 0);               // tags
        scratchView.putInt(24, count);            // nr
        final long result = libc.syscall(
            Linux.SYS_IO_URING_REGISTER, fd, IORING_REGISTER_BUFFERS_UPDATE, BufferUtil.address(scratch), RSRC_SIZE, 0, 0);
        if (result < 0)
        {
            return -Linux.errno();
        }
        return result == count ? 0 : -Linux.errno();
    }

    /**
     * Writes {@code length} bytes from a fixed buffer to a file, and waits.
     *
     * @return bytes written, or a negative errno.
     */
    public synchronized int writeFixed(
        final int fileFd, final long address, final int length, final long fileOffset, final int bufferIndex)
    {
        return submitAndWait(IORING_OP_WRITE_FIXED, fileFd, address, length, fileOffset, bufferIndex);
    }

    /**
     * Reads {@code length} bytes from a file into a fixed buffer, and waits.
     *
     * @return bytes read, or a negative errno.
     */
    public synchronized int readFixed(
        final int fileFd, final long address, final int length, final long fileOffset, final int bufferIndex)
    {
        return submitAndWait(IORING_OP_READ_FIXED, fileFd, address, length, fileOffset, bufferIndex);
    }

    private int submitAndWait(
        final byte opcode, final int fileFd, final long address, final int length, final long fileOffset, final int index)
    {
        if (closed)
        {
            throw new IllegalStateException("io_uring is closed");
        }
        // Only this thread writes the SQ tail; the kernel writes the SQ head. Plain read of our own tail.
        final int tail = sq.getInt(sqTail);
        final int slot = tail & sq.getInt(sqMask);
        final int base = slot * SQE_SIZE;
        sqe.setMemory(base, SQE_SIZE, (byte)0);
        sqe.putByte(base + SQE_OPCODE, opcode);
        sqe.putInt(base + SQE_FD, fileFd);
        sqe.putLong(base + SQE_OFF, fileOffset);
        sqe.putLong(base + SQE_ADDR, address);
        sqe.putInt(base + SQE_LEN, length);
        sqe.putLong(base + SQE_USER_DATA, tail);
        sqe.putShort(base + SQE_BUF_INDEX, (short)index);
        sq.putInt(sqArray + slot * 4, slot);
        // Release: the SQE and array entry must be visible to the kernel before it sees the new tail.
        sq.putIntRelease(sqTail, tail + 1);

        final long entered = libc.syscall(Linux.SYS_IO_URING_ENTER, fd, 1, 1, IORING_ENTER_GETEVENTS, 0, 0);
        if (entered < 0)
        {
            throw new RegistrationException("io_uring_enter", Linux.errno(), null);
        }
        // Acquire: the CQE's contents are valid once we have seen the kernel's tail move past it.
        final int head = cq.getInt(cqHead);
        while (cq.getIntAcquire(cqTail) == head)
        {
            Thread.onSpinWait();
        }
        final int res = cq.getInt(cqes + (head & cq.getInt(cqMask)) * CQE_SIZE + CQE_RES);
        // Release: the kernel may reuse the CQE slot only after we have read it.
        cq.putIntRelease(cqHead, head + 1);
        return res;
    }

    /**
     * Unmaps the rings and closes the descriptor; the kernel then drops every fixed buffer and its pins.
     */
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        libc.munmap(sqes, sqesSize);
        if (cqRingSize != 0)
        {
            libc.munmap(cqRing, cqRingSize);
        }
        libc.munmap(sqRing, sqRingSize);
        libc.close(fd);
    }

    private long mapRing(final long size, final long offset)
    {
        final long address = Linux.mmap(
            0, size, Linux.PROT_READ | Linux.PROT_WRITE, 0x01 /* MAP_SHARED */ | Linux.MAP_POPULATE, fd, offset);
        if (address == Linux.MAP_FAILED)
        {
            final int errno = Linux.errno();
            libc.close(fd);
            throw new RegistrationException("mmap of io_uring ring at offset 0x" + Long.toHexString(offset), errno, null);
        }
        return address;
    }

    private static String setupHint(final int errno)
    {
        switch (errno)
        {
            case 38:
                return "this kernel has no io_uring (needs Linux 5.1+ built with CONFIG_IO_URING)";
            case 1:
                return "io_uring is disabled for this process: check sysctl kernel.io_uring_disabled and seccomp";
            case 12:
                return "out of memory for the rings: raise ulimit -l or grant CAP_IPC_LOCK";
            case 24:
                return "too many open files: raise ulimit -n";
            default:
                return null;
        }
    }
}
