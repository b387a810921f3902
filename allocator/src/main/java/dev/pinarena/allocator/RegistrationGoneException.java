package dev.pinarena.allocator;

/**
 * The registration of a buffer's chunk is no longer live (someone deregistered the arena's region through
 * the registrar): its keys would name nothing, so none is returned.
 */
public final class RegistrationGoneException extends ArenaException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param address the address the request named.
     * @param message what was wrong and why.
     */
    public RegistrationGoneException(final long address, final String message)
    {
        super(address, message);
    }
}
