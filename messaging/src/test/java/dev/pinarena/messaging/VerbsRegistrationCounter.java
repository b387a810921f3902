package dev.pinarena.messaging;

import jnr.ffi.LibraryLoader;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Reads the ibv_reg_mr count of this process from the counting library (src/test/c/verbs_reg_counter.c) when it
 * is preloaded (LD_PRELOAD), so a test can show that UCX made no device registration of its own per message.
 */
final class VerbsRegistrationCounter
{
    /** Where the messaging build puts the library, relative to the module. */
    static final Path LIBRARY = Paths.get("target/native/libverbs-reg-counter.so");
    /** The count when the library is not preloaded. */
    static final long NOT_COUNTED = -1;

    /** The library's counters. */
    public interface Counts
    {
        /**
         * @return registrations so far.
         */
        long pinarena_verbs_registrations();
    }

    private static final Counts COUNTS = load();

    private VerbsRegistrationCounter()
    {
    }

    /**
     * @return memory registrations this process made through libibverbs, or {@link #NOT_COUNTED}.
     */
    static long registrations()
    {
        return COUNTS == null ? NOT_COUNTED : COUNTS.pinarena_verbs_registrations();
    }

    /**
     * @return the absolute library path to preload into a child JVM, or null if it was not built.
     */
    static String libraryToPreload()
    {
        return Files.isRegularFile(LIBRARY) ? LIBRARY.toAbsolutePath().toString() : null;
    }

    private static Counts load()
    {
        final String preload = System.getenv("LD_PRELOAD");
        if (preload == null || !preload.contains("libverbs-reg-counter.so"))
        {
            return null;
        }
        for (final String path : preload.split("[: ]"))
        {
            if (path.endsWith("libverbs-reg-counter.so"))
            {
                return LibraryLoader.create(Counts.class).load(path);
            }
        }
        return null;
    }
}
