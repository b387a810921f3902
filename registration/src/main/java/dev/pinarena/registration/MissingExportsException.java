package dev.pinarena.registration;

/**
 * The JVM was started without {@value AgronaAccess#FLAG}, which pinarena's buffers need.
 */
public final class MissingExportsException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what is missing and how to add it.
     */
    public MissingExportsException(final String message)
    {
        super(message);
    }
}
