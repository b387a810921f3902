package dev.pinarena.allocator;

import dev.pinarena.registration.Region;
import dev.pinarena.registration.os.PageMap;
import dev.pinarena.registration.uring.FixedBufferProbe;
import dev.pinarena.registration.uring.IoUringRegistrar;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs {@link ModelOp} sequences against one {@link PinnedArena}, over an io_uring registrar, and
 * reports what it sees to a {@link RuleModel}: addresses, bytes (read directly and sent through the key with
 * io_uring WRITE_FIXED), physical frames (pagemap, as root) and registrations. A second thread allocates and
 * frees for {@code h} and {@code x}. The arena has no trim: {@code t} checks that no remembered frame moved;
 * memory leaves only when the arena releases idle dedicated chunks at its cap (seen as registrations ended)
 * and when it is closed ({@link #close}), which must leave the registrar with nothing pinned.
 */
final class ArenaModelDriver implements AutoCloseable
{
    private final IoUringRegistrar registrar = TestArenas.registrar();
    private final PageMap pageMap = PageMap.open();
    private final ExecutorService helper = Executors.newSingleThreadExecutor(task ->
    {
        final Thread thread = new Thread(task, "model-helper");
        thread.setDaemon(true);
        return thread;
    });
    private boolean broken;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    // One arena for many sequences: opening and closing one per sequence cost ~100 ms (io_uring's buffer
    // table updates), and memory freed by earlier sequences is what later ones must be handed safely. It is
    // replaced only after a failure (the next sequence, a shrinker's candidate, starts clean). Freed dedicated
    // chunks of many sizes pile up over thousands of sequences until the arena releases some at its cap.
    private static final long CAP = 256L << 20;
    private PinnedArena arena = PinnedArena.open(registrar, TestArenas.config(CAP));

    /**
     * @param ops a sequence the Java model accepts.
     * @throws AssertionError naming the operation, its position and the broken rule.
     */
    void run(final List<ModelOp> ops)
    {
        final RuleModel model = new RuleModel(false);
        int index = 0;
        try
        {
            for (final ModelOp op : ops)
            {
                if (!model.legal(op))
                {
                    throw new IllegalArgumentException("op #" + index + " '" + op + "' is not legal here for the Java model");
                }
                final Map<Long, Region> before = op.kind() == 'a' ? regionsOfRememberedPages(model) : Map.of();
                step(arena, model, op);
                forgetReleased(model, before);
                model.apply(op, index);
                if (op.kind() == 'a')
                {
                    final RuleModel.Slot slot = model.slot(op.id());
                    if (op.remote())
                    {
                        checkZero(slot);
                    }
                    write(slot);
                    observeBlockFrames(model, slot, "after allocation");
                }
                index++;
            }
            index = -1;
            observeAllFrames(model, "at the end");
            for (int id = 0; id < RuleModel.SLOTS; id++)
            {
                final RuleModel.Slot slot = model.slot(id);
                if (slot.state == RuleModel.State.LIVE)
                {
                    verify(slot, "at the end");
                    arena.free(slot.address);
                }
            }
            if (arena.stats().buffersInUse() != 0)
            {
                throw new RuleModel.Violation("release", arena.stats().buffersInUse() + " buffers in use after every free");
            }
        }
        catch (final AssertionError | RuntimeException ex)
        {
            final String where = index < 0 ? "after the last op" : "op #" + index + " '" + ops.get(index) + "'";
            broken = true;
            final AssertionError failure = new AssertionError(where + ": " + ex, ex);
            try
            {
                closeArena();
                arena = PinnedArena.open(registrar, TestArenas.config(CAP));
            }
            catch (final RuntimeException reopen)
            {
                failure.addSuppressed(reopen);
            }
            throw failure;
        }
    }

    /** Only an allocation may release (idle dedicated chunks, at the cap): the registrations it may end. */
    private Map<Long, Region> regionsOfRememberedPages(final RuleModel model)
    {
        final Map<Long, Region> regions = new HashMap<>();
        for (final long page : model.rememberedPages())
        {
            regions.put(page, arena.region(page));
        }
        return regions;
    }

    /**
     * Rule release while open: a page whose registration the operation ended was released (deregistered,
     * then unmapped, perhaps mapped again for a new chunk): the model checks that no live block lay there and
     * forgets its frames and keys.
     */
    private static void forgetReleased(final RuleModel model, final Map<Long, Region> before)
    {
        before.forEach((page, region) ->
        {
            if (!region.isLive())
            {
                model.released(page, RuleModel.PAGE);
            }
        });
    }

    /** Rule release, Java's form: closing the arena gives back all of it. */
    private void closeArena()
    {
        if (broken)
        {
            broken = false;
            arena.close(true);
            return;
        }
        arena.close();
        if (registrar.pinnedBytes() != 0 || registrar.regionCount() != 0)
        {
            throw new RuleModel.Violation("release", "the closed arena left " + registrar.regionCount() + " regions, " +
                registrar.pinnedBytes() + " bytes pinned");
        }
    }

    private void step(final PinnedArena arena, final RuleModel model, final ModelOp op)
    {
        final RuleModel.Slot slot = op.id() < 0 ? null : model.slot(op.id());
        switch (op.kind())
        {
            case 'a' ->
            {
                final Callable<Long> allocate = () -> op.remote() ? arena.allocateRemote(op.size()) :
                    op.align() != 0 ? arena.allocate(op.size(), op.align()) : arena.allocate(op.size());
                final long address = op.helper() ? onHelper(allocate) : call(allocate);
                model.allocated(op.id(), address, op.size(), arena.usableSize(address), op.align());
            }
            case 'f', 'x' ->
            {
                verify(slot, "before its free");
                if (op.kind() == 'f')
                {
                    arena.free(slot.address);
                }
                else
                {
                    onHelper(() ->
                    {
                        arena.free(slot.address);
                        return 0L;
                    });
                }
            }
            case 'k' -> lookUp(arena, model, op.id(), slot);
            case 'd' -> doubleFree(arena, model, slot);
            case 't' -> observeAllFrames(model, "at t");
            default -> throw new IllegalArgumentException("'" + op + "' has no Java meaning");
        }
    }

    private void lookUp(final PinnedArena arena, final RuleModel model, final int id, final RuleModel.Slot slot)
    {
        verify(slot, "at its lookup");
        final Region region = arena.region(slot.address);
        if (region != arena.region(slot.address + slot.size - 1) || !region.isLive())
        {
            throw new RuleModel.Violation("keys", "slot " + id + ": no single live registration over the block");
        }
        model.key(id, region.address(), region.length(), region.lkey());
        if (arena.lkey(slot.address) != region.lkey())
        {
            throw new RuleModel.Violation("keys", "lkey " + arena.lkey(slot.address) + " is not the region's " + region.lkey());
        }
        final int length = (int)Math.min(64, slot.size);
        sendAndCompare(region, slot, 0, length);
        sendAndCompare(region, slot, slot.size - length, length);
        if (slot.remote && arena.remoteKeyMode() == RemoteKeyMode.NONE)
        {
            try
            {
                final int rkey = arena.rkey(slot.address);
                throw new RuleModel.Violation("keys", "remote key " + rkey + " handed out by a registrar without remote keys");
            }
            catch (final NoRemoteKeyException expected)
            {
                // no peer can reach it: right for io_uring
            }
        }
        observeBlockFrames(model, slot, "at its lookup");
    }

    private void sendAndCompare(final Region region, final RuleModel.Slot slot, final long offset, final int length)
    {
        final byte[] sent = FixedBufferProbe.send(registrar, region, slot.address + offset, length);
        for (int i = 0; i < length; i++)
        {
            if (sent[i] != RuleModel.pattern(slot.seed, offset + i))
            {
                throw new RuleModel.Violation("keys", "the key sends byte " + sent[i] + " at offset " + (offset + i) +
                    " of " + RuleModel.hex(slot.address) + ", the block holds " + RuleModel.pattern(slot.seed, offset + i));
            }
        }
    }

    private void doubleFree(final PinnedArena arena, final RuleModel model, final RuleModel.Slot slot)
    {
        for (int id = 0; id < RuleModel.SLOTS; id++)
        {
            final RuleModel.Slot live = model.slot(id);
            if (live.state == RuleModel.State.LIVE && slot.address >= live.address &&
                slot.address < live.address + live.usable)
            {
                return; // handed out again: freeing it would be the new owner's free, not a double one
            }
        }
        try
        {
            arena.free(slot.address);
        }
        catch (final DoubleFreeException refused)
        {
            return; // refused and named as free()'s Javadoc says, nothing freed
        }
        throw new RuleModel.Violation("double free", "a second free of " + RuleModel.hex(slot.address) + " was accepted");
    }

    private void observeBlockFrames(final RuleModel model, final RuleModel.Slot slot, final String when)
    {
        final long first = slot.address & -RuleModel.PAGE;
        final long last = (slot.address + slot.size - 1) & -RuleModel.PAGE;
        model.frame(first, pageMap.frame(first), when);
        model.frame(last, pageMap.frame(last), when);
    }

    private void observeAllFrames(final RuleModel model, final String when)
    {
        for (final long page : model.rememberedPages())
        {
            model.frame(page, frameOrAbsent(page), when);
        }
    }

    private long frameOrAbsent(final long page)
    {
        try
        {
            return pageMap.frame(page);
        }
        catch (final IllegalStateException notPresent)
        {
            return -1;
        }
    }

    private void write(final RuleModel.Slot slot)
    {
        view.wrap(slot.address, (int)slot.size);
        RuleModel.forEachCheckedOffset(slot.size, offset -> view.putByte((int)offset, RuleModel.pattern(slot.seed, offset)));
    }

    private void verify(final RuleModel.Slot slot, final String when)
    {
        view.wrap(slot.address, (int)slot.size);
        RuleModel.forEachCheckedOffset(slot.size, offset ->
        {
            final byte got = view.getByte((int)offset);
            if (got != RuleModel.pattern(slot.seed, offset))
            {
                throw new RuleModel.Violation("contents", RuleModel.hex(slot.address) + "+" + slot.size + " " + when +
                    ": byte " + got + " at offset " + offset + ", written " + RuleModel.pattern(slot.seed, offset));
            }
        });
    }

    private void checkZero(final RuleModel.Slot slot)
    {
        view.wrap(slot.address, (int)slot.size);
        RuleModel.forEachCheckedOffset(slot.size, offset ->
        {
            if (view.getByte((int)offset) != 0)
            {
                throw new RuleModel.Violation("contents", "remote block " + RuleModel.hex(slot.address) +
                    " is not zero at offset " + offset);
            }
        });
    }

    private long onHelper(final Callable<Long> task)
    {
        final Future<Long> result = helper.submit(task);
        try
        {
            return result.get();
        }
        catch (final ExecutionException ex)
        {
            if (ex.getCause() instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new IllegalStateException(ex.getCause());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private static long call(final Callable<Long> task)
    {
        try
        {
            return task.call();
        }
        catch (final RuntimeException ex)
        {
            throw ex;
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close()
    {
        try
        {
            closeArena();
        }
        finally
        {
            helper.shutdownNow();
            pageMap.close();
        }
        registrar.close();
    }
}
