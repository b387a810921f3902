package dev.pinarena.registration.cache;

import dev.pinarena.registration.RegistrationException;

/**
 * A {@link RegistrationCache} is at its region-count or byte limit and every region is in use, so nothing
 * can be evicted: {@code put} some regions back first, or raise the limits.
 */
public final class CacheFullException extends RegistrationException
{
    private static final long serialVersionUID = 1L;

    CacheFullException(final int regions, final int maxRegions, final long bytes, final long maxBytes)
    {
        super("registration cache full: " + regions + "/" + maxRegions + " regions, " + bytes + "/" + maxBytes +
            " bytes, every region in use");
    }
}
