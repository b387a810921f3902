package dev.pinarena.registration.select;

import java.util.Locale;

/**
 * The registration backends a user can name ({@code auto}, {@code verbs}, {@code io_uring}, {@code mlock}).
 */
public enum RegistrarKind
{
    /** verbs if a device opens, else io_uring, else mlock. */
    AUTO("auto"),
    /** ibv_reg_mr on an RDMA device: real lkey/rkey. */
    VERBS("verbs"),
    /** io_uring fixed buffers: a real long-term kernel pin without RDMA hardware. */
    IO_URING("io_uring"),
    /** mlock: residency only. */
    MLOCK("mlock");

    private final String label;

    RegistrarKind(final String label)
    {
        this.label = label;
    }

    /**
     * @return the configuration name.
     */
    public String label()
    {
        return label;
    }

    /**
     * @param label a configuration name (case-insensitive; {@code io-uring} accepted).
     * @return the kind.
     * @throws IllegalArgumentException naming the kinds that exist.
     */
    public static RegistrarKind fromLabel(final String label)
    {
        final String wanted = label.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        for (final RegistrarKind kind : values())
        {
            if (kind.label.equals(wanted))
            {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown registrar '" + label + "': use auto, verbs, io_uring or mlock");
    }
}
