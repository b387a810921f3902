package dev.pinarena.allocator;

/**
 * A free or key lookup of an address this arena never gave out: outside every chunk, or in memory that holds
 * no buffer.
 */
public final class UnknownAddressException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public UnknownAddressException(final long address, final String message)
    {
        super(address, message);
    }
}
