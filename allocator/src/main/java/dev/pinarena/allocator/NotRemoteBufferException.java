package dev.pinarena.allocator;

/**
 * A remote key was asked for a buffer of a local-only chunk: a remote key never reaches a local buffer.
 */
public final class NotRemoteBufferException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named, or 0 if it named none.
     * @param message what was wrong and why.
     */
    public NotRemoteBufferException(final long address, final String message)
    {
        super(address, message);
    }
}
