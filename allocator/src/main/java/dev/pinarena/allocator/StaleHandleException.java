package dev.pinarena.allocator;

/**
 * A {@link BufferHandle} whose buffer was freed and handed out again: freeing it would free the new
 * owner's buffer. Nothing was freed.
 */
public final class StaleHandleException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the handle's address.
     * @param message what was wrong and why.
     */
    public StaleHandleException(final long address, final String message)
    {
        super(address, message);
    }
}
