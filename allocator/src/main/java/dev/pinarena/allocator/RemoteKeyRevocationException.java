package dev.pinarena.allocator;

/**
 * Freeing a remote buffer failed because the device did not confirm that its key is dead. The buffer stays
 * allocated (its bytes are never handed out again); the free may be retried.
 */
public final class RemoteKeyRevocationException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the buffer.
     * @param message what failed.
     * @param cause   the device's refusal.
     */
    public RemoteKeyRevocationException(final long address, final String message, final Throwable cause)
    {
        super(address, message, cause);
    }
}
