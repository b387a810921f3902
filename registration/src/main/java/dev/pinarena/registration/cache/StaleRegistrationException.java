package dev.pinarena.registration.cache;

import dev.pinarena.registration.RegistrationException;

/**
 * The verify mode of a {@link RegistrationCache} found that the physical frames behind a cached
 * registration are no longer those it pinned: an unmap, remap or madvise went unseen (for example glibc's
 * own munmap in free(), which symbol interposition cannot catch). The entry has been dropped; calling
 * {@code get} again registers the current pages.
 */
public final class StaleRegistrationException extends RegistrationException
{
    private static final long serialVersionUID = 1L;

    private final long address;
    private final long length;

    StaleRegistrationException(final long address, final long length)
    {
        super("STALE registration 0x" + Long.toHexString(address) + "+" + length +
            ": physical frames changed since registration (an invalidation was missed); entry dropped");
        this.address = address;
        this.length = length;
    }

    /**
     * @return first byte of the stale registration.
     */
    public long address()
    {
        return address;
    }

    /**
     * @return its length in bytes.
     */
    public long length()
    {
        return length;
    }
}
