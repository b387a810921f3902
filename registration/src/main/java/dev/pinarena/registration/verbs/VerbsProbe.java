package dev.pinarena.registration.verbs;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.RegistrationException;

import java.util.Collections;
import java.util.List;

/**
 * Whether verbs registration works here, for {@code pinarena doctor} and the {@code auto} backend choice.
 * <p>
 * {@link #probe()} lists the devices and opens the first one with a protection domain (then closes it), so
 * "available" means a {@link VerbsRegistrar} can be opened, not merely that a device is listed. Immutable.
 */
public final class VerbsProbe
{
    private final boolean available;
    private final List<String> deviceNames;
    private final String description;
    private final String reason;

    private VerbsProbe(
        final boolean available, final List<String> deviceNames, final String description, final String reason)
    {
        this.available = available;
        this.deviceNames = deviceNames;
        this.description = description;
        this.reason = reason;
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
            return new VerbsProbe(false, Collections.emptyList(), null, ex.getMessage());
        }
        catch (final RuntimeException | LinkageError ex)
        {
            return new VerbsProbe(false, Collections.emptyList(), null, "listing RDMA devices failed: " + ex);
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

    /**
     * @return true if a {@link VerbsRegistrar} could be opened on the first device.
     */
    public boolean available()
    {
        return available;
    }

    /**
     * @return the devices libibverbs listed, possibly empty; unmodifiable.
     */
    public List<String> deviceNames()
    {
        return deviceNames;
    }

    /**
     * @return the first device's {@link VerbsRegistrar#description()} when available, else null.
     */
    public String description()
    {
        return description;
    }

    /**
     * @return why verbs is not available (the failing call, its errno and the fix), or null when it is.
     */
    public String reason()
    {
        return reason;
    }

    public String toString()
    {
        return available ?
            "verbs: available, devices " + deviceNames + " (" + description + ")" :
            "verbs: unavailable: " + reason;
    }
}
