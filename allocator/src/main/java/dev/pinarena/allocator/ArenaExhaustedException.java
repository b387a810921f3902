package dev.pinarena.allocator;

/**
 * The pin cap is reached (or the registrar or the kernel refused to pin more): a new chunk would be needed
 * and cannot be had. Nothing was allocated.
 */
public final class ArenaExhaustedException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public ArenaExhaustedException(final long address, final String message)
    {
        super(address, message);
    }

    /**
     * @param address 0: no address was handed out.
     * @param message what was asked and which limit refused it.
     * @param cause   the registrar's or the mapper's refusal, if that was the limit.
     */
    public ArenaExhaustedException(final long address, final String message, final Throwable cause)
    {
        super(address, message, cause);
    }
}
