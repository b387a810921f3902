package dev.pinarena.allocator;

/**
 * {@link PinnedArena#close()} refused because buffers are still allocated; close them or force.
 */
public final class BuffersOutstandingException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public BuffersOutstandingException(final long address, final String message)
    {
        super(address, message);
    }
}
