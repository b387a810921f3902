package dev.pinarena.registration;

/**
 * {@link Registrar#close()} while a user that holds regions of it (an open arena) is still recorded: closing
 * would deregister memory that user goes on handing out. Close the user first.
 */
public final class RegistrarInUseException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param registrar name of the registrar.
     * @param users     who still uses it.
     */
    public RegistrarInUseException(final String registrar, final String users)
    {
        super("close() of registrar " + registrar + " refused: still in use by " + users +
            " — close that first (an arena deregisters its chunks when it closes)");
    }
}
