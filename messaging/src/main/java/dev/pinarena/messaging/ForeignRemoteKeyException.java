package dev.pinarena.messaging;

/**
 * A remote key offered to {@link ArenaEndpoint#unpackRemoteKey(RemoteBuffer)} that did not arrive from that
 * endpoint's peer (it was made locally, or decoded on another endpoint): UCX would parse it unchecked, so it
 * is refused before it reaches UCX.
 */
public final class ForeignRemoteKeyException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message which descriptor and which endpoint.
     */
    public ForeignRemoteKeyException(final String message)
    {
        super(message);
    }
}
