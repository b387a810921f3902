package dev.pinarena.allocator;

/**
 * Base of every error the arena reports for bad input or exhausted capacity. The arena is unchanged and
 * keeps working after any of them.
 */
public abstract class ArenaException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final long address;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    protected ArenaException(final long address, final String message)
    {
        super(message);
        this.address = address;
    }

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     * @param cause   the underlying failure.
     */
    protected ArenaException(final long address, final String message, final Throwable cause)
    {
        super(message, cause);
        this.address = address;
    }

    /**
     * @return the address the failed request named, or 0 if it named none.
     */
    public long address()
    {
        return address;
    }

    static String hex(final long address)
    {
        return "0x" + Long.toHexString(address);
    }
}
