package dev.pinarena.registration;

/**
 * A region handed to {@link Registrar#deregister(Region)} is not live in that registrar: it was already
 * deregistered, or another registrar made it.
 */
public final class UnknownRegionException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param registrar name of the registrar asked.
     * @param region    the region it does not hold.
     * @param reason    why, e.g. "already deregistered".
     */
    public UnknownRegionException(final String registrar, final Region region, final String reason)
    {
        super(registrar + ": cannot deregister " + region + ": " + reason);
    }
}
