package dev.pinarena.messaging;

/**
 * A request on an endpoint whose peer failed ({@link PeerFailureHandler}): it would only fail in UCX, so it is
 * refused before it is issued.
 */
public final class PeerFailedException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    private final int status;

    /**
     * @param status  the UCX status the peer failed with.
     * @param message what was refused and why.
     */
    public PeerFailedException(final int status, final String message)
    {
        super(message);
        this.status = status;
    }

    /**
     * @return the UCX status the peer failed with ({@code UcsConstants.STATUS}).
     */
    public int status()
    {
        return status;
    }
}
