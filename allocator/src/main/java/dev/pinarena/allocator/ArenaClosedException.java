package dev.pinarena.allocator;

/**
 * Use of an arena after {@link PinnedArena#close()}.
 */
public final class ArenaClosedException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public ArenaClosedException(final long address, final String message)
    {
        super(address, message);
    }
}
