package dev.pinarena.registration.select;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.mlock.MlockRegistrar;
import dev.pinarena.registration.uring.IoUringRegistrar;
import dev.pinarena.registration.verbs.VerbsProbe;
import dev.pinarena.registration.verbs.VerbsRegistrar;

import java.util.ArrayList;
import java.util.List;

/**
 * Opens the registrar a user asked for; for {@link RegistrarKind#AUTO}, the best one that works here —
 * verbs if a device opens, else io_uring, else mlock — and records why each better one was passed over.
 */
public final class RegistrarSelector
{
    private final Registrar registrar;
    private final List<String> reasons;

    private RegistrarSelector(final Registrar registrar, final List<String> reasons)
    {
        this.registrar = registrar;
        this.reasons = List.copyOf(reasons);
    }

    /**
     * @param kind   what to open.
     * @param device RDMA device name for verbs, or null for the first.
     * @param budget cap on pinned bytes.
     * @return the opened registrar and why it was chosen.
     * @throws RegistrationException if an explicitly named backend cannot be opened.
     */
    public static RegistrarSelector open(final RegistrarKind kind, final String device, final PinBudget budget)
    {
        switch (kind)
        {
            case VERBS:
                return new RegistrarSelector(VerbsRegistrar.open(device, budget), List.of("verbs: asked for"));
            case IO_URING:
                return new RegistrarSelector(IoUringRegistrar.open(budget), List.of("io_uring: asked for"));
            case MLOCK:
                return new RegistrarSelector(MlockRegistrar.open(budget), List.of("mlock: asked for"));
            case AUTO:
                return auto(device, budget);
            default:
                throw new IllegalStateException("unhandled kind " + kind);
        }
    }

    private static RegistrarSelector auto(final String device, final PinBudget budget)
    {
        final List<String> reasons = new ArrayList<>();
        final VerbsProbe probe = VerbsProbe.probe();
        if (probe.available() || device != null)
        {
            try
            {
                final VerbsRegistrar verbs = VerbsRegistrar.open(device, budget);
                reasons.add("verbs: picked: " + verbs.description());
                return new RegistrarSelector(verbs, reasons);
            }
            catch (final RegistrationException ex)
            {
                reasons.add("verbs: passed over: " + ex.getMessage());
            }
        }
        else
        {
            reasons.add("verbs: passed over: " + probe.reason());
        }
        try
        {
            final IoUringRegistrar uring = IoUringRegistrar.open(budget);
            reasons.add("io_uring: picked: a long-term kernel pin, keys are fixed-buffer indexes (no remote access)");
            return new RegistrarSelector(uring, reasons);
        }
        catch (final RegistrationException ex)
        {
            reasons.add("io_uring: passed over: " + ex.getMessage());
        }
        reasons.add("mlock: picked: residency only, pages may still move (no DMA guarantee)");
        return new RegistrarSelector(MlockRegistrar.open(budget), reasons);
    }

    /**
     * @return the opened registrar; the caller closes it.
     */
    public Registrar registrar()
    {
        return registrar;
    }

    /**
     * @return one line per backend considered, in order: picked, or passed over and why.
     */
    public List<String> reasons()
    {
        return reasons;
    }
}
