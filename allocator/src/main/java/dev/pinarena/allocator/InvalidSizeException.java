package dev.pinarena.allocator;

/**
 * A request for zero, negative or more bytes than the arena can ever hold.
 */
public final class InvalidSizeException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public InvalidSizeException(final long address, final String message)
    {
        super(address, message);
    }
}
