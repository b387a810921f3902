package dev.pinarena.registration.verbs;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.RegistrationException;

import java.util.ArrayList;
import java.util.List;

/**
 * Child JVM for {@link VerbsRegistrarTest}: lowers {@code RLIMIT_MEMLOCK}, registers chunks until the device
 * refuses, deregisters what succeeded and reports, one {@code KEY value} per line, what it saw. Runs without
 * {@code CAP_IPC_LOCK} (the parent starts it under {@code setpriv}), else root would pass the limit.
 */
public final class VerbsMemlockChild
{
    private VerbsMemlockChild()
    {
    }

    /**
     * @param args limit bytes, chunk bytes, most chunks to try.
     */
    public static void main(final String[] args)
    {
        final long limit = Long.parseLong(args[0]);
        final long chunk = Long.parseLong(args[1]);
        final int maxChunks = Integer.parseInt(args[2]);

        if (TestLibc.LIBC.setrlimit(TestLibc.RLIMIT_MEMLOCK, new long[] {limit, limit}) != 0)
        {
            System.out.println("SETUP_FAILED setrlimit errno " + jnr.ffi.Runtime.getRuntime(TestLibc.LIBC).getLastError());
            System.exit(3);
        }
        System.out.println("CAP_EFF " + procStatus("CapEff"));
        System.out.println("VMPIN_START " + TestLibc.procStatusKb("VmPin"));

        final List<Region> regions = new ArrayList<>();
        final List<Long> mappings = new ArrayList<>();
        try (VerbsRegistrar registrar = VerbsRegistrar.open(null, new PinBudget(PinBudget.UNLIMITED)))
        {
            try
            {
                for (int i = 0; i < maxChunks; i++)
                {
                    final long address = TestLibc.map(chunk);
                    mappings.add(address);
                    regions.add(registrar.register(address, chunk));
                }
                System.out.println("NO_FAILURE");
            }
            catch (final RegistrationException ex)
            {
                System.out.println("FAILURE " + ex.getMessage());
                System.out.println("FAILURE_CALL " + ex.call());
                System.out.println("FAILURE_ERRNO " + ex.errno());
            }
            System.out.println("REGISTERED " + regions.size());
            System.out.println("VMPIN_FULL " + TestLibc.procStatusKb("VmPin"));
            System.out.println("PINNED_BYTES_FULL " + registrar.pinnedBytes());
            for (final Region region : regions)
            {
                registrar.deregister(region);
            }
            System.out.println("PINNED_BYTES_AFTER " + registrar.pinnedBytes());
            System.out.println("REGION_COUNT_AFTER " + registrar.regionCount());
        }
        System.out.println("VMPIN_AFTER " + TestLibc.procStatusKb("VmPin"));
        for (final long address : mappings)
        {
            TestLibc.unmap(address, chunk);
        }
        System.out.println("DONE");
    }

    private static String procStatus(final String field)
    {
        try
        {
            for (final String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status")))
            {
                if (line.startsWith(field + ":"))
                {
                    return line.substring(field.length() + 1).trim();
                }
            }
        }
        catch (final java.io.IOException ex)
        {
            return "unreadable: " + ex;
        }
        return "absent";
    }
}
