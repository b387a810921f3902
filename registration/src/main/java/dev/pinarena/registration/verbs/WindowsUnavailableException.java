package dev.pinarena.registration.verbs;

/**
 * Memory windows cannot serve per-buffer keys here; the message says why (no library, no windows on the
 * device, a device that does not keep a peer inside a window's bounds).
 */
public final class WindowsUnavailableException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param reason why windows are not used.
     */
    public WindowsUnavailableException(final String reason)
    {
        super("memory windows unavailable: " + reason);
    }
}
