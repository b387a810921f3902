package dev.pinarena.registration.os;

/**
 * The OS would not map a chunk with any of the page backings tried; the message lists why each failed.
 */
public final class MappingFailedException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what was asked and why each attempt failed.
     */
    public MappingFailedException(final String message)
    {
        super(message);
    }
}
