package dev.pinarena.registration;

/**
 * A registered (pinned) range of virtual memory, as handed out by a {@link Registrar}.
 * <p>
 * Immutable. {@code lkey} and {@code rkey} are what an RDMA work request names; backends without keys
 * (io_uring, mlock) give the values documented on their class. {@code handle} is the backend's own
 * reference to the registration (the {@code struct ibv_mr *} for verbs, the first fixed-buffer index for
 * io_uring) and means nothing to callers.
 */
public final class Region
{
    private final Registrar owner;
    private final long address;
    private final long length;
    private final int lkey;
    private final int rkey;
    private final int access;
    private final long handle;
    private final int slots;
    private volatile boolean deregistered;

    Region(
        final Registrar owner,
        final long address,
        final long length,
        final int lkey,
        final int rkey,
        final int access,
        final long handle,
        final int slots)
    {
        this.owner = owner;
        this.address = address;
        this.length = length;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
        this.handle = handle;
        this.slots = slots;
    }

    /**
     * @return the registrar that made this region.
     */
    public Registrar owner()
    {
        return owner;
    }

    /**
     * @return first byte of the region.
     */
    public long address()
    {
        return address;
    }

    /**
     * @return length of the region in bytes.
     */
    public long length()
    {
        return length;
    }

    /**
     * @return one past the last byte of the region.
     */
    public long end()
    {
        return address + length;
    }

    /**
     * @return key for local access (the {@code lkey} of an {@code ibv_mr}).
     */
    public int lkey()
    {
        return lkey;
    }

    /**
     * @return key for remote access (the {@code rkey} of an {@code ibv_mr}); only meaningful when the
     * region was registered with a remote access right.
     */
    public int rkey()
    {
        return rkey;
    }

    /**
     * @return the {@link Access} bits the region was registered with.
     */
    public int access()
    {
        return access;
    }

    /**
     * @return backend-specific handle.
     */
    public long handle()
    {
        return handle;
    }

    /**
     * @return how many backend slots the region occupies (io_uring fixed buffers; 1 elsewhere).
     */
    public int slots()
    {
        return slots;
    }

    /**
     * @param address first byte.
     * @param length  bytes.
     * @return true if [address, address + length) lies inside this region.
     */
    public boolean covers(final long address, final long length)
    {
        return address >= this.address && length >= 0 && address + length <= end();
    }

    /**
     * @return true until the registrar unpinned this region (deregister or close); its keys mean nothing after.
     */
    public boolean isLive()
    {
        return !deregistered;
    }

    void markDeregistered()
    {
        deregistered = true;
    }

    public String toString()
    {
        return "Region{" + owner.name() +
            " 0x" + Long.toHexString(address) + "+" + length +
            " lkey=0x" + Integer.toHexString(lkey) +
            " rkey=0x" + Integer.toHexString(rkey) +
            " access=" + Access.describe(access) + '}';
    }
}
