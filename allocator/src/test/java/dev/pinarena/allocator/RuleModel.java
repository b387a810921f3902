package dev.pinarena.allocator;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reference model of the rules both allocators promise, fed by a driver with what it observed:
 * <ol>
 * <li><b>unique</b>: a live block is never handed out again while it is live;</li>
 * <li><b>disjoint</b>: live blocks never overlap, and each has the alignment it asked for;</li>
 * <li><b>contents</b>: a block reads what was written into it until it is freed (a remote block, and a range
 *     the program madvised DONTNEED, reads zeroes first);</li>
 * <li><b>frames</b>: a page's physical frame, once seen while registered, does not change until a release
 *     covering it;</li>
 * <li><b>keys</b>: a lookup reaches a registration covering the whole block, whose key stays the same until a
 *     release covers it (or a longer registration of the same base replaces it); the Java driver also sends the
 *     block's bytes through the key;</li>
 * <li><b>release</b>: memory leaves only through a release (the C shim's trim, or its realloc moving a huge
 *     object) naming no live block, and only from trim or realloc;</li>
 * <li><b>double free</b>: freeing a freed block whose memory nobody holds again is refused, nothing freed (the C
 *     shim may also abort, or catch it later: then no live block may be handed out again).</li>
 * </ol>
 * It also says which operation may come next ({@link #legal}), so a generator and a shrinker produce only
 * sequences a correct allocator must survive; {@link #pattern} is the bytes a block holds.
 */
final class RuleModel
{
    /** Slots a sequence names. */
    static final int SLOTS = 16;
    /** Default alignment both allocators promise. */
    static final int MIN_ALIGN = 16;
    /** Pages whose frames are remembered at most (first and last page of each block looked at). */
    static final int MAX_PAGES = 4096;
    static final long PAGE = 4096;
    /**
     * The C shim's largest small size class: pages of smaller blocks are shared by several blocks and keep
     * the program's mprotect until their span is released (bindings-c/README.md, as on glibc's heap), so the
     * model mprotects only larger blocks.
     */
    static final long SHIM_SMALL_MAX = 256 << 10;

    enum State
    {
        EMPTY, LIVE, FREED
    }

    /** What the model knows of one slot. */
    static final class Slot
    {
        State state = State.EMPTY;
        long size;
        long seed;
        boolean remote;
        boolean readOnly;
        long address;
        long usable;
    }

    /** A rule broken: the message names the rule. */
    static final class Violation extends AssertionError
    {
        private static final long serialVersionUID = 1L;

        Violation(final String rule, final String message)
        {
            super("rule '" + rule + "': " + message);
        }
    }

    private final Slot[] slots = new Slot[SLOTS];
    private final TreeMap<Long, Long> frames = new TreeMap<>();
    private final Map<Long, long[]> keys = new HashMap<>();
    private final boolean cSide;

    /**
     * @param cSide true for the C shim (realloc, fork, madvise and mprotect are allowed).
     */
    RuleModel(final boolean cSide)
    {
        this.cSide = cSide;
        for (int i = 0; i < SLOTS; i++)
        {
            slots[i] = new Slot();
        }
    }

    Slot slot(final int id)
    {
        return slots[id];
    }

    /** @return true if {@code op} may come next in a sequence a correct allocator must survive. */
    boolean legal(final ModelOp op)
    {
        if (op.cOnly() && !cSide)
        {
            return false;
        }
        if (op.kind() == 'F' || op.kind() == 'd' && cSide)
        {
            // With io_uring the shim pins its chunks again after fork, which fails on a page the program made
            // read-only: the chunk has no keys (every block of it looks up -ENODATA) until the page is
            // writable again (tests/shim/test_readonly_keys.c), so no fork while a live block holds one.
            // (C's double free runs in a forked child.)
            for (final Slot slot : slots)
            {
                if (slot.state == State.LIVE && slot.readOnly)
                {
                    return false;
                }
            }
            if (op.kind() == 'F')
            {
                return true;
            }
        }
        if (op.id() < 0)
        {
            return true;
        }
        final Slot slot = slots[op.id()];
        return switch (op.kind())
        {
            case 'a' -> slot.state != State.LIVE && !(op.remote() && op.align() != 0);
            case 'f', 'x', 'k' -> slot.state == State.LIVE;
            case 'z', 'm' -> slot.state == State.LIVE && !slot.remote && !slot.readOnly;
            case 'p' -> slot.state == State.LIVE && !slot.remote && !slot.readOnly && slot.size > SHIM_SMALL_MAX;
            case 'd' -> slot.state == State.FREED;
            default -> false;
        };
    }

    /**
     * The abstract effect of a legal operation (call after the driver ran it and reported what it saw).
     *
     * @param op    the operation.
     * @param index its position in the sequence: a new block's contents derive from it.
     */
    void apply(final ModelOp op, final int index)
    {
        if (op.id() < 0)
        {
            return;
        }
        final Slot slot = slots[op.id()];
        switch (op.kind())
        {
            case 'a' ->
            {
                slot.state = State.LIVE;
                slot.size = op.size();
                slot.seed = index;
                slot.remote = op.remote();
                slot.readOnly = false;
            }
            case 'f', 'x' -> slot.state = State.FREED;
            case 'z' -> slot.size = op.size();
            case 'p' -> slot.readOnly = true;
            default ->
            {
            }
        }
    }

    /** @return the ops of {@code ops} that stay legal in order (what a shrinker may try). */
    static List<ModelOp> normalize(final List<ModelOp> ops, final boolean cSide)
    {
        final RuleModel model = new RuleModel(cSide);
        final List<ModelOp> kept = new ArrayList<>();
        for (final ModelOp op : ops)
        {
            if (model.legal(op))
            {
                model.apply(op, kept.size());
                kept.add(op);
            }
        }
        return kept;
    }

    /** Rules unique and disjoint, for a block just handed out to {@code id}. */
    void allocated(final int id, final long address, final long size, final long usable, final int align)
    {
        final long want = Math.max(align, MIN_ALIGN);
        if ((address & (want - 1)) != 0)
        {
            throw new Violation("disjoint", hex(address) + " is not aligned to " + want);
        }
        if (usable < size)
        {
            throw new Violation("disjoint", hex(address) + " usable " + usable + " < asked " + size);
        }
        for (int other = 0; other < SLOTS; other++)
        {
            final Slot live = slots[other];
            if (other != id && live.state == State.LIVE)
            {
                if (live.address == address)
                {
                    throw new Violation("unique", hex(address) + " handed out again while slot " + other + " holds it");
                }
                if (address < live.address + live.usable && live.address < address + usable)
                {
                    throw new Violation("disjoint", hex(address) + "+" + usable + " overlaps slot " + other + " at " +
                        hex(live.address) + "+" + live.usable);
                }
            }
        }
        slots[id].address = address;
        slots[id].usable = usable;
    }

    /** Rule frames: {@code frame} is what the page at {@code page} is backed by now (-1: not present). */
    void frame(final long page, final long frame, final String when)
    {
        final Long before = frames.get(page);
        if (before == null)
        {
            if (frame >= 0 && frames.size() < MAX_PAGES)
            {
                frames.put(page, frame);
            }
            return;
        }
        if (before != frame)
        {
            throw new Violation("frames", "page " + hex(page) + " was frame 0x" + Long.toHexString(before) + ", is " +
                (frame < 0 ? "not present" : "0x" + Long.toHexString(frame)) + " " + when + " with no release");
        }
    }

    /** @return the pages whose frames are remembered. */
    long[] rememberedPages()
    {
        return frames.keySet().stream().mapToLong(Long::longValue).toArray();
    }

    /** Rule keys: a lookup of slot {@code id} found the registration [base, base + length) with key {@code key}. */
    void key(final int id, final long base, final long length, final long key)
    {
        final Slot slot = slots[id];
        if (base > slot.address || slot.address + slot.size > base + length)
        {
            throw new Violation("keys", "registration " + hex(base) + "+" + length + " does not cover slot " + id +
                " at " + hex(slot.address) + "+" + slot.size);
        }
        // A registration is replaced only by a longer one (the C shim's huge object grown in place gets a
        // second record over the longer range; the first stays until the chunk is released).
        final long[] before = keys.put(base, new long[] {key, length});
        if (before != null && before[0] != key && length <= before[1])
        {
            throw new Violation("keys", "registration at " + hex(base) + "+" + before[1] + " had key " + before[0] +
                ", now " + key + " over " + length + " bytes with no release");
        }
    }

    /** Rule release: [base, base + length) left (or is about to leave) the allocator. */
    void released(final long base, final long length)
    {
        for (int id = 0; id < SLOTS; id++)
        {
            final Slot live = slots[id];
            if (live.state == State.LIVE && live.address < base + length && base < live.address + live.size)
            {
                throw new Violation("release", hex(base) + "+" + length + " released under live slot " + id + " at " +
                    hex(live.address) + "+" + live.size);
            }
        }
        frames.subMap(base, base + length).clear();
        keys.keySet().removeIf(key -> key >= base && key < base + length);
    }

    /** The byte at {@code offset} of a block whose contents derive from {@code seed}. */
    static byte pattern(final long seed, final long offset)
    {
        return (byte)(((seed + 1) * 0x9E3779B97F4A7C15L + offset * 0xBF58476D1CE4E5B9L) >>> 56);
    }

    /** An offset visitor. */
    interface OffsetAction
    {
        void at(long offset);
    }

    /** Every byte of a block up to 512 bytes; head, tail and 64 samples between for larger ones. */
    static void forEachCheckedOffset(final long size, final OffsetAction action)
    {
        if (size <= 512)
        {
            for (long i = 0; i < size; i++)
            {
                action.at(i);
            }
            return;
        }
        for (long i = 0; i < 64; i++)
        {
            action.at(i);
            action.at(size - 64 + i);
        }
        final long stride = Math.max(64, size / 64);
        for (long i = 64; i < size - 64; i += stride)
        {
            action.at(i);
        }
    }

    static String hex(final long address)
    {
        return "0x" + Long.toHexString(address);
    }
}
