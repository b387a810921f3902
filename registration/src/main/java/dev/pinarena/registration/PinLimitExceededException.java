package dev.pinarena.registration;

/**
 * A registration would take a registrar's pinned bytes beyond its {@link PinBudget} cap. Nothing was pinned.
 */
public final class PinLimitExceededException extends RegistrationException
{
    private static final long serialVersionUID = 1L;

    private final long requested;
    private final long pinned;
    private final long cap;

    /**
     * @param registrar name of the registrar that refused.
     * @param requested bytes asked for.
     * @param pinned    bytes already pinned.
     * @param cap       the cap.
     */
    public PinLimitExceededException(final String registrar, final long requested, final long pinned, final long cap)
    {
        super(registrar + ": registering " + requested + " bytes would pin " + (pinned + requested) +
            " bytes, over the cap of " + cap + " bytes (" + pinned + " already pinned)" +
            " — raise the cap, or raise ulimit -l / grant CAP_IPC_LOCK if the cap comes from RLIMIT_MEMLOCK");
        this.requested = requested;
        this.pinned = pinned;
        this.cap = cap;
    }

    /**
     * @return bytes asked for.
     */
    public long requested()
    {
        return requested;
    }

    /**
     * @return bytes pinned when the request was refused.
     */
    public long pinned()
    {
        return pinned;
    }

    /**
     * @return the cap in force.
     */
    public long cap()
    {
        return cap;
    }
}
