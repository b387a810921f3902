package dev.pinarena.messaging;

import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.Out;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Reads the ibv_reg_mr count of this process from the project's one counting preload, bindings-c's
 * {@code libpinarena-regcount.so} (tests/mpi/regcount.c, built into pinarena.native.dir/mpi), when it is preloaded
 * (LD_PRELOAD), so a test can show that UCX made no device registration of its own per message.
 */
final class VerbsRegistrationCounter
{
    /** The library's file name. */
    private static final String NAME = "libpinarena-regcount.so";
    /** Where bindings-c's build puts the library (pinarena.native.dir, as Maven and testbed/run-junit pass it). */
    static final Path LIBRARY = Paths.get(System.getProperty("pinarena.native.dir", "../bindings-c/target"), "mpi", NAME);
    /** The count when the library is not preloaded. */
    static final long NOT_COUNTED = -1;

    /** The library's reader: registrations, their bytes, deregistrations (struct regcount, three uint64_t). */
    public interface Counts
    {
        /**
         * @param out filled with registrations, registered bytes and deregistrations so far.
         */
        void regcount_read(@Out long[] out);
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
        if (COUNTS == null)
        {
            return NOT_COUNTED;
        }
        final long[] counts = new long[3];
        COUNTS.regcount_read(counts);
        return counts[0];
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
        if (preload == null)
        {
            return null;
        }
        for (final String path : preload.split("[: ]"))
        {
            if (path.endsWith(NAME))
            {
                return LibraryLoader.create(Counts.class).load(path);
            }
        }
        return null;
    }
}
