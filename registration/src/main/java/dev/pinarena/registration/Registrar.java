package dev.pinarena.registration;

import dev.pinarena.registration.internal.RegisteredRanges;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Pins ranges of memory with one backend (verbs, io_uring or mlock) and hands back {@link Region}s.
 * <p>
 * This class owns what every backend shares: argument checks, the {@link PinBudget}, the set of live
 * regions (so a double deregister is caught, not passed to the kernel) and the process-wide
 * {@link RegisteredRanges} index that lets the OS layer refuse to unmap a registered page. Backends
 * implement {@link #pin}, {@link #unpin} and {@link #release}.
 * <p>
 * Thread safety: every method may be called from any thread. Registration is a slow path (a system call or
 * a verbs call costing micro- to milliseconds), so a single lock per registrar is used; nothing here is on
 * a per-buffer path.
 */
public abstract class Registrar implements AutoCloseable
{
    static
    {
        AgronaAccess.require(); // before any backend touches an Agrona buffer: a message that names the flag
    }

    /** Registrations start on a page boundary; the kernel pins whole pages. */
    public static final long PAGE_SIZE = 4096;

    private final String name;
    private final PinBudget budget;
    private final Map<Region, Boolean> live = new IdentityHashMap<>();
    private final Map<Object, Boolean> users = new IdentityHashMap<>();
    private boolean closed;

    /**
     * @param name   short backend name, e.g. {@code io_uring}.
     * @param budget the cap on bytes pinned at once.
     */
    protected Registrar(final String name, final PinBudget budget)
    {
        this.name = name;
        this.budget = budget;
    }

    /**
     * @return short backend name: {@code verbs}, {@code io_uring} or {@code mlock}.
     */
    public final String name()
    {
        return name;
    }

    /**
     * @return one line on what this registrar pins with, e.g. the device and port for verbs.
     */
    public abstract String description();

    /**
     * @return the budget that caps this registrar.
     */
    public final PinBudget budget()
    {
        return budget;
    }

    /**
     * @return bytes pinned by this registrar now.
     */
    public final long pinnedBytes()
    {
        return budget.pinnedBytes();
    }

    /**
     * @return number of live regions.
     */
    public final synchronized int regionCount()
    {
        return live.size();
    }

    /**
     * @return true once {@link #close()} has run.
     */
    public final synchronized boolean isClosed()
    {
        return closed;
    }

    /**
     * Records a user that keeps regions of this registrar for its own lifetime (an arena): {@link #close()}
     * refuses while any user is recorded, so the user never holds a key of a registration that is gone.
     *
     * @param user the user, named by its {@code toString()} in the refusal.
     * @throws RegistrarClosedException after close.
     */
    public final synchronized void addUser(final Object user)
    {
        if (closed)
        {
            throw new RegistrarClosedException(name, "addUser");
        }
        users.put(user, Boolean.TRUE);
    }

    /**
     * Forgets a user recorded by {@link #addUser(Object)}, once it deregistered what it registered.
     *
     * @param user the user.
     */
    public final synchronized void removeUser(final Object user)
    {
        users.remove(user);
    }

    /**
     * Registers with {@link Access#LOCAL_WRITE}.
     *
     * @param address first byte, page aligned.
     * @param length  bytes, positive.
     * @return the live region.
     * @see #register(long, long, int)
     */
    public final Region register(final long address, final long length)
    {
        return register(address, length, Access.LOCAL_WRITE);
    }

    /**
     * Pins [address, address + length) so its physical pages stay put until {@link #deregister(Region)}.
     *
     * @param address first byte; must be non-zero and a multiple of {@link #PAGE_SIZE}.
     * @param length  bytes; must be positive.
     * @param access  {@link Access} bits.
     * @return the live region.
     * @throws IllegalArgumentException    for a zero, unaligned or wrapping range or bad access bits.
     * @throws PinLimitExceededException   if the budget would be passed.
     * @throws RegistrarClosedException    after close.
     * @throws RegistrationException       if the backend refuses (the message names the call and the fix).
     */
    public final synchronized Region register(final long address, final long length, final int access)
    {
        if (closed)
        {
            throw new RegistrarClosedException(name, "register");
        }
        checkRange(address, length);
        Access.validate(access);
        checkAccess(access);

        budget.reserve(name, length);
        final Region region;
        try
        {
            region = pin(address, length, access);
        }
        catch (final RuntimeException ex)
        {
            budget.release(length);
            throw ex;
        }
        live.put(region, Boolean.TRUE);
        RegisteredRanges.add(region);
        return region;
    }

    /**
     * Unpins a region this registrar made.
     *
     * @param region a live region of this registrar.
     * @throws UnknownRegionException   if it is not live here (double deregister, foreign region).
     * @throws RegistrarClosedException after close.
     */
    public final synchronized void deregister(final Region region)
    {
        if (closed)
        {
            throw new RegistrarClosedException(name, "deregister");
        }
        if (region == null)
        {
            throw new IllegalArgumentException("region is null");
        }
        if (region.owner() != this)
        {
            throw new UnknownRegionException(name, region, "it belongs to registrar " + region.owner().name());
        }
        if (!live.containsKey(region))
        {
            throw new UnknownRegionException(name, region, "already deregistered");
        }
        // Unpin first: if the backend refuses, the pages are still pinned, so the region stays live and
        // stays in RegisteredRanges, where it keeps the OS layer from unmapping them.
        unpin(region);
        region.markDeregistered();
        live.remove(region);
        RegisteredRanges.remove(region);
        budget.release(region.length());
    }

    /**
     * Deregisters every live region, then releases the backend (device, ring). Idempotent.
     *
     * @throws RegistrarInUseException while a user recorded by {@link #addUser(Object)} (an open arena) still
     *                                 holds regions; nothing is released then.
     */
    public final synchronized void close()
    {
        if (closed)
        {
            return;
        }
        if (!users.isEmpty())
        {
            throw new RegistrarInUseException(name, users.keySet().toString());
        }
        closed = true;
        RuntimeException first = null;
        for (final Region region : live.keySet())
        {
            try
            {
                unpin(region);
                region.markDeregistered();
                RegisteredRanges.remove(region);
                budget.release(region.length());
            }
            catch (final RuntimeException ex)
            {
                // Still pinned: leave it in RegisteredRanges so its pages are never unmapped.
                if (first == null)
                {
                    first = ex;
                }
            }
        }
        live.clear();
        try
        {
            release();
        }
        catch (final RuntimeException ex)
        {
            if (first == null)
            {
                first = ex;
            }
        }
        if (first != null)
        {
            throw first;
        }
    }

    /**
     * Backend hook: pin the range. Arguments are already checked and the budget reserved.
     *
     * @param address page-aligned first byte.
     * @param length  positive length.
     * @param access  valid access bits, accepted by {@link #checkAccess(int)}.
     * @return the region, made with {@link #newRegion}.
     */
    protected abstract Region pin(long address, long length, int access);

    /**
     * Backend hook: unpin a live region.
     *
     * @param region a region returned by {@link #pin}.
     */
    protected abstract void unpin(Region region);

    /**
     * Backend hook: release the backend's own resources after every region was unpinned.
     */
    protected abstract void release();

    /**
     * Backend hook: refuse access bits the backend cannot honour. The default accepts all valid bits.
     *
     * @param access valid access bits.
     */
    protected void checkAccess(final int access)
    {
    }

    /**
     * For backends: builds a region owned by this registrar.
     *
     * @param address first byte.
     * @param length  bytes.
     * @param lkey    local key.
     * @param rkey    remote key.
     * @param access  access bits.
     * @param handle  backend handle.
     * @param slots   backend slots used.
     * @return the region.
     */
    protected final Region newRegion(
        final long address,
        final long length,
        final int lkey,
        final int rkey,
        final int access,
        final long handle,
        final int slots)
    {
        return new Region(this, address, length, lkey, rkey, access, handle, slots);
    }

    private static void checkRange(final long address, final long length)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        if (address == 0)
        {
            throw new IllegalArgumentException("address is null");
        }
        if ((address & (PAGE_SIZE - 1)) != 0)
        {
            throw new IllegalArgumentException(
                "address 0x" + Long.toHexString(address) + " is not aligned to the " + PAGE_SIZE + "-byte page");
        }
        if (address + length < address || address < 0)
        {
            throw new IllegalArgumentException(
                "range 0x" + Long.toHexString(address) + "+" + length + " wraps the address space");
        }
    }

    public String toString()
    {
        return name + " (" + description() + ")";
    }
}
