package dev.pinarena.allocator;

/**
 * A requested alignment that is not a power of two, or larger than the arena page.
 */
public final class InvalidAlignmentException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public InvalidAlignmentException(final long address, final String message)
    {
        super(address, message);
    }
}
