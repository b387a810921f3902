package dev.pinarena.registration.cache;

import dev.pinarena.registration.Region;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A {@link Region} held by a {@link RegistrationCache}, with a use count.
 * <p>
 * {@code state} packs the use references (low 32 bits) with two flags: {@code INVALID} (out of the index;
 * deregistered by the last {@link RegistrationCache#put}) and {@code DEAD} (deregistered, or claimed by the
 * slow path for eviction or merging). A reader takes a reference with a CAS that is refused once either
 * flag is set; an evictor claims an idle region with a CAS from exactly 0 to {@code DEAD}. One of the two
 * wins, so a region is never evicted while a caller uses it. Regions are never reused (the garbage
 * collector reclaims them), so a reader needs no re-check after its CAS.
 */
public final class CachedRegion
{
    static final long INVALID = 1L << 32;
    static final long DEAD = 1L << 33;
    static final long REFS = 0xffff_ffffL;

    private static final VarHandle STATE;

    static
    {
        try
        {
            STATE = MethodHandles.lookup().findVarHandle(CachedRegion.class, "state", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    final Region region;
    final long address;
    final long end;
    final int access;
    final long frameHash;
    long lastUse;
    @SuppressWarnings("unused")
    private volatile long state = 1;

    CachedRegion(final Region region, final long frameHash)
    {
        this.region = region;
        this.address = region.address();
        this.end = region.end();
        this.access = region.access();
        this.frameHash = frameHash;
    }

    /**
     * @return the registration: keys, address, length.
     */
    public Region region()
    {
        return region;
    }

    /**
     * @return the local key, as {@code region().lkey()}.
     */
    public int lkey()
    {
        return region.lkey();
    }

    /**
     * @return the remote key, as {@code region().rkey()}.
     */
    public int rkey()
    {
        return region.rkey();
    }

    boolean contains(final long start, final long end, final int access)
    {
        return address <= start && this.end >= end && (this.access & access) == access;
    }

    boolean tryAcquire()
    {
        long s = (long)STATE.getOpaque(this);
        while ((s & (INVALID | DEAD)) == 0)
        {
            final long witness = (long)STATE.compareAndExchangeAcquire(this, s, s + 1);
            if (witness == s)
            {
                return true;
            }
            s = witness;
        }
        return false;
    }

    /** @return the state after the release. */
    long release()
    {
        return (long)STATE.getAndAddRelease(this, -1L) - 1;
    }

    boolean claimIdle()
    {
        return STATE.compareAndSet(this, 0L, DEAD);
    }

    void unclaim()
    {
        STATE.setRelease(this, 0L);
    }

    /** @return the state before INVALID was set. */
    long markInvalid()
    {
        return (long)STATE.getAndBitwiseOr(this, INVALID);
    }

    boolean invalidToDead()
    {
        return STATE.compareAndSet(this, INVALID, DEAD);
    }

    long state()
    {
        return (long)STATE.getVolatile(this);
    }

    public String toString()
    {
        return "CachedRegion{" + region + ", uses=" + (state() & REFS) + "}";
    }
}
