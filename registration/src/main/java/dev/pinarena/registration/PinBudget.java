package dev.pinarena.registration;

/**
 * Counts the bytes a registrar has pinned and refuses a registration that would pass the cap.
 * <p>
 * Registration is never on a hot path, so the budget is guarded by its registrar's lock rather than made
 * lock-free; {@link #pinnedBytes()} may be read from any thread.
 */
public final class PinBudget
{
    /** No cap beyond what the kernel enforces. */
    public static final long UNLIMITED = Long.MAX_VALUE;

    private final long capBytes;
    private volatile long pinnedBytes;

    /**
     * @param capBytes the most bytes that may be pinned at once, or {@link #UNLIMITED}.
     */
    public PinBudget(final long capBytes)
    {
        if (capBytes <= 0)
        {
            throw new IllegalArgumentException("pin cap must be positive: " + capBytes);
        }
        this.capBytes = capBytes;
    }

    /**
     * @return the cap in bytes.
     */
    public long capBytes()
    {
        return capBytes;
    }

    /**
     * @return bytes pinned now.
     */
    public long pinnedBytes()
    {
        return pinnedBytes;
    }

    /**
     * @return bytes that may still be pinned.
     */
    public long remainingBytes()
    {
        return capBytes - pinnedBytes;
    }

    void reserve(final String registrar, final long bytes)
    {
        final long pinned = pinnedBytes;
        if (bytes > capBytes - pinned)
        {
            throw new PinLimitExceededException(registrar, bytes, pinned, capBytes);
        }
        pinnedBytes = pinned + bytes;
    }

    void release(final long bytes)
    {
        pinnedBytes -= bytes;
    }

    public String toString()
    {
        return "PinBudget{pinned=" + pinnedBytes + ", cap=" + (capBytes == UNLIMITED ? "unlimited" : capBytes) + '}';
    }
}
