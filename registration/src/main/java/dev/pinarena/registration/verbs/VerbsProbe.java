package dev.pinarena.registration.verbs;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.RegistrationException;

import java.util.List;

/**
 * Whether verbs registration works here, for {@code pinarena doctor} and the {@code auto} backend choice.
 * <p>
 * {@link #probe()} lists the devices and opens the first one with a protection domain (then closes it), so
 * "available" means a {@link VerbsRegistrar} can be opened, not merely that a device is listed.
 *
 * @param available   true if a {@link VerbsRegistrar} could be opened on the first device.
 * @param deviceNames the devices libibverbs listed, possibly empty; unmodifiable.
 * @param description the first device's {@link VerbsRegistrar#description()} when available, else null.
 * @param reason      why verbs is not available (the failing call, its errno and the fix), or null when it is.
 */
public record VerbsProbe(boolean available, List<String> deviceNames, String description, String reason)
{
    /** Keeps an unmodifiable copy of the device list. */
    public VerbsProbe
    {
        deviceNames = List.copyOf(deviceNames);
    }

    /**
     * Probes libibverbs and the first device. Never throws for "no RDMA here": every failure becomes a
     * {@link #reason()}.
     *
     * @return the result.
     */
    public static VerbsProbe probe()
    {
        final List<String> names;
        try
        {
            names = VerbsRegistrar.listDevices();
        }
        catch (final RegistrationException ex)
        {
            return new VerbsProbe(false, List.of(), null, ex.getMessage());
        }
        catch (final RuntimeException | LinkageError ex)
        {
            return new VerbsProbe(false, List.of(), null, "listing RDMA devices failed: " + ex);
        }

        try (VerbsRegistrar registrar = VerbsRegistrar.open(names.get(0), new PinBudget(PinBudget.UNLIMITED)))
        {
            return new VerbsProbe(true, names, registrar.description(), null);
        }
        catch (final RegistrationException ex)
        {
            return new VerbsProbe(false, names, null, ex.getMessage());
        }
        catch (final RuntimeException | LinkageError ex)
        {
            return new VerbsProbe(false, names, null, "opening " + names.get(0) + " failed: " + ex);
        }
    }

    @Override
    public String toString()
    {
        return available ?
            "verbs: available, devices " + deviceNames + " (" + description + ")" :
            "verbs: unavailable: " + reason;
    }
}
