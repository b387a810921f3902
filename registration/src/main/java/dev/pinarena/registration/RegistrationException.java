package dev.pinarena.registration;

import dev.pinarena.registration.internal.Errno;

/**
 * A call into the kernel or the RDMA stack failed. The message names the call, the errno (by name and
 * number) and the most likely fix, for example
 * {@code ibv_reg_mr failed: ENOMEM (12) Cannot allocate memory — raise ulimit -l or grant CAP_IPC_LOCK}.
 */
public class RegistrationException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;
    private final String hint;

    /**
     * @param call  the failing call, e.g. {@code io_uring_register(IORING_REGISTER_BUFFERS_UPDATE)}.
     * @param errno the errno it left, or 0 if it reports failure some other way.
     * @param hint  the likely fix, or null.
     */
    public RegistrationException(final String call, final int errno, final String hint)
    {
        super(format(call, errno, hint));
        this.call = call;
        this.errno = errno;
        this.hint = hint;
    }

    /**
     * For failures that are not a single errno, such as a limit this project enforces.
     *
     * @param message the whole message.
     */
    public RegistrationException(final String message)
    {
        super(message);
        this.call = null;
        this.errno = 0;
        this.hint = null;
    }

    /**
     * @return the failing call, or null.
     */
    public String call()
    {
        return call;
    }

    /**
     * @return the errno, or 0.
     */
    public int errno()
    {
        return errno;
    }

    /**
     * @return the suggested fix, or null.
     */
    public String hint()
    {
        return hint;
    }

    private static String format(final String call, final int errno, final String hint)
    {
        final StringBuilder sb = new StringBuilder(call).append(" failed");
        if (errno != 0)
        {
            sb.append(": ").append(Errno.describe(errno));
        }
        if (hint != null)
        {
            sb.append(" — ").append(hint);
        }
        return sb.toString();
    }
}
