package dev.pinarena.registration.internal;

/**
 * The errno values this project reacts to, and their names for messages. Values are Linux x86-64/arm64.
 */
public final class Errno
{
    /** Operation not permitted. */
    public static final int EPERM = 1;
    /** No such file or directory. */
    public static final int ENOENT = 2;
    /** Interrupted system call. */
    public static final int EINTR = 4;
    /** Bad file descriptor. */
    public static final int EBADF = 9;
    /** Resource temporarily unavailable. */
    public static final int EAGAIN = 11;
    /** Cannot allocate memory. */
    public static final int ENOMEM = 12;
    /** Permission denied. */
    public static final int EACCES = 13;
    /** Bad address. */
    public static final int EFAULT = 14;
    /** Device or resource busy. */
    public static final int EBUSY = 16;
    /** No such device. */
    public static final int ENODEV = 19;
    /** Invalid argument. */
    public static final int EINVAL = 22;
    /** Too many open files. */
    public static final int EMFILE = 24;
    /** Function not implemented. */
    public static final int ENOSYS = 38;
    /** Operation not supported. */
    public static final int EOPNOTSUPP = 95;

    private static final String[][] NAMES = new String[128][];

    static
    {
        NAMES[1] = new String[] {"EPERM", "Operation not permitted"};
        NAMES[2] = new String[] {"ENOENT", "No such file or directory"};
        NAMES[3] = new String[] {"ESRCH", "No such process"};
        NAMES[4] = new String[] {"EINTR", "Interrupted system call"};
        NAMES[5] = new String[] {"EIO", "Input/output error"};
        NAMES[6] = new String[] {"ENXIO", "No such device or address"};
        NAMES[7] = new String[] {"E2BIG", "Argument list too long"};
        NAMES[9] = new String[] {"EBADF", "Bad file descriptor"};
        NAMES[11] = new String[] {"EAGAIN", "Resource temporarily unavailable"};
        NAMES[12] = new String[] {"ENOMEM", "Cannot allocate memory"};
        NAMES[13] = new String[] {"EACCES", "Permission denied"};
        NAMES[14] = new String[] {"EFAULT", "Bad address"};
        NAMES[16] = new String[] {"EBUSY", "Device or resource busy"};
        NAMES[17] = new String[] {"EEXIST", "File exists"};
        NAMES[19] = new String[] {"ENODEV", "No such device"};
        NAMES[22] = new String[] {"EINVAL", "Invalid argument"};
        NAMES[23] = new String[] {"ENFILE", "Too many open files in system"};
        NAMES[24] = new String[] {"EMFILE", "Too many open files"};
        NAMES[28] = new String[] {"ENOSPC", "No space left on device"};
        NAMES[38] = new String[] {"ENOSYS", "Function not implemented"};
        NAMES[75] = new String[] {"EOVERFLOW", "Value too large for defined data type"};
        NAMES[95] = new String[] {"EOPNOTSUPP", "Operation not supported"};
        NAMES[110] = new String[] {"ETIMEDOUT", "Connection timed out"};
    }

    private Errno()
    {
    }

    /**
     * @param errno an errno value.
     * @return e.g. {@code ENOMEM (12) Cannot allocate memory}.
     */
    public static String describe(final int errno)
    {
        if (errno <= 0 || errno >= NAMES.length || NAMES[errno] == null)
        {
            return "errno " + errno;
        }
        return NAMES[errno][0] + " (" + errno + ") " + NAMES[errno][1];
    }
}
