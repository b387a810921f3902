package dev.pinarena.registration;

/**
 * Access rights a registration grants, as a bit set. The values are those of {@code enum ibv_access_flags}
 * in rdma-core's {@code verbs.h}, so the verbs backend passes them through unchanged; other backends accept
 * the same bits and reject what they cannot honour.
 */
public final class Access
{
    /** The local HCA may write into the memory (receives, RDMA READ responses). The default. */
    public static final int LOCAL_WRITE = 1;
    /** A peer may RDMA WRITE into the memory with the region's rkey. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** A peer may RDMA READ the memory with the region's rkey. */
    public static final int REMOTE_READ = 1 << 2;
    /** A peer may perform atomics on the memory. */
    public static final int REMOTE_ATOMIC = 1 << 3;

    /**
     * Memory windows may be bound to the memory ({@code IBV_ACCESS_MW_BIND}): the registration's own key then
     * reaches nothing remotely unless a remote right is also granted; each window's key reaches its window.
     */
    public static final int MW_BIND = 1 << 4;
    /** Every bit this project knows; anything else is refused. */
    public static final int ALL_KNOWN = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | MW_BIND;

    private Access()
    {
    }

    /**
     * @param access a bit set of the constants above.
     * @return true if any remote right is requested.
     */
    public static boolean isRemote(final int access)
    {
        return (access & (REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC)) != 0;
    }

    /**
     * Checks an access bit set against the rules verbs itself enforces.
     *
     * @param access the bit set to check.
     * @throws IllegalArgumentException naming the offending bits.
     */
    public static void validate(final int access)
    {
        if ((access & ~ALL_KNOWN) != 0)
        {
            throw new IllegalArgumentException(
                "unknown access bits 0x" + Integer.toHexString(access & ~ALL_KNOWN) + " in " + describe(access));
        }
        if ((access & (REMOTE_WRITE | REMOTE_ATOMIC)) != 0 && (access & LOCAL_WRITE) == 0)
        {
            throw new IllegalArgumentException(
                "REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE (as ibv_reg_mr does): " + describe(access));
        }
    }

    /**
     * @param access a bit set.
     * @return a readable form such as {@code LOCAL_WRITE|REMOTE_READ}.
     */
    public static String describe(final int access)
    {
        final StringBuilder sb = new StringBuilder();
        append(sb, access, LOCAL_WRITE, "LOCAL_WRITE");
        append(sb, access, REMOTE_WRITE, "REMOTE_WRITE");
        append(sb, access, REMOTE_READ, "REMOTE_READ");
        append(sb, access, REMOTE_ATOMIC, "REMOTE_ATOMIC");
        append(sb, access, MW_BIND, "MW_BIND");
        final int unknown = access & ~ALL_KNOWN;
        if (unknown != 0)
        {
            if (sb.length() > 0)
            {
                sb.append('|');
            }
            sb.append("0x").append(Integer.toHexString(unknown));
        }
        return sb.length() == 0 ? "NONE" : sb.toString();
    }

    private static void append(final StringBuilder sb, final int access, final int bit, final String name)
    {
        if ((access & bit) != 0)
        {
            if (sb.length() > 0)
            {
                sb.append('|');
            }
            sb.append(name);
        }
    }
}
