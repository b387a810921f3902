package dev.pinarena.allocator;

/**
 * A free of a buffer that is not allocated now: it was freed already (or, at a block boundary, never handed
 * out). Detected in O(1) from the block's state bit or the run's page state.
 */
public final class DoubleFreeException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public DoubleFreeException(final long address, final String message)
    {
        super(address, message);
    }
}
