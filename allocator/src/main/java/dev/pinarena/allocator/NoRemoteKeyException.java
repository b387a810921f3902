package dev.pinarena.allocator;

/**
 * A remote key was asked for where the arena makes none: its registrar is not verbs
 * ({@link RemoteKeyMode#NONE}), or the address is not the start of a live remote buffer.
 */
public final class NoRemoteKeyException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named.
     * @param message what was wrong and why.
     */
    public NoRemoteKeyException(final long address, final String message)
    {
        super(address, message);
    }
}
