package dev.pinarena.registration;

/**
 * A registrar was used after {@link Registrar#close()}.
 */
public final class RegistrarClosedException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param registrar name of the closed registrar.
     * @param operation what was attempted.
     */
    public RegistrarClosedException(final String registrar, final String operation)
    {
        super(operation + " on closed registrar " + registrar);
    }
}
