package dev.pinarena.messaging;

/**
 * Told when UCX reports an endpoint's peer failed (its process died, its endpoint closed, the connection
 * reset). Called from {@link ArenaNode#progress()} on the progress thread, once per endpoint; the endpoint's
 * outstanding requests complete with an error status, and its new requests throw {@link PeerFailedException}.
 */
@FunctionalInterface
public interface PeerFailureHandler
{
    /**
     * @param endpoint the endpoint whose peer failed; close it to release it.
     * @param status   the UCX status ({@code UcsConstants.STATUS}).
     * @param message  UCX's description of the status.
     */
    void onPeerFailure(ArenaEndpoint endpoint, int status, String message);
}
