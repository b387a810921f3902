package dev.pinarena.allocator;

/**
 * A free of an address inside a buffer rather than at its first byte.
 */
public final class InteriorPointerException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public InteriorPointerException(final long address, final String message)
    {
        super(address, message);
    }
}
