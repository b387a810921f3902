package dev.pinarena.messaging;

/**
 * Bytes that came from a peer do not decode: too short for what they claim, a length out of its bounds, or a
 * range that wraps around the address space. Thrown before anything is allocated or handed to UCX, so a
 * hostile or broken peer costs a refused message, nothing more.
 */
public final class MalformedPeerInputException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what does not decode, with the offending numbers.
     */
    public MalformedPeerInputException(final String message)
    {
        super(message);
    }
}
