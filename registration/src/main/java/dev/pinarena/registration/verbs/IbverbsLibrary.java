package dev.pinarena.registration.verbs;

import dev.pinarena.registration.verbs.internal.LibIbverbs;

import dev.pinarena.registration.RegistrationException;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;

/**
 * Loads libibverbs on first use, so that this package's classes load on hosts without rdma-core and only an
 * attempt to use verbs fails, with a {@link RegistrationException} saying what to install.
 */
final class IbverbsLibrary
{
    /** The runtime library's soname; the unversioned {@code libibverbs.so} only comes with the -dev package. */
    static final String SONAME = "libibverbs.so.1";

    /** What to install when the library is missing. */
    static final String INSTALL_HINT =
        "libibverbs is not installed: apt-get install libibverbs1 ibverbs-providers";

    private IbverbsLibrary()
    {
    }

    /**
     * @return the binding.
     * @throws RegistrationException if libibverbs cannot be loaded.
     */
    static LibIbverbs lib()
    {
        final Holder holder = Holder.INSTANCE;
        if (holder.lib == null)
        {
            throw new RegistrationException("dlopen(" + SONAME + ")", 0, INSTALL_HINT + " (" + holder.failure + ")");
        }
        return holder.lib;
    }

    /**
     * @return the jnr runtime of the binding.
     * @throws RegistrationException if libibverbs cannot be loaded.
     */
    static Runtime runtime()
    {
        return Runtime.getRuntime(lib());
    }

    /**
     * @return errno saved by the last {@code @SaveError} call on this thread.
     */
    static int lastErrno()
    {
        return runtime().getLastError();
    }

    private static final class Holder
    {
        static final Holder INSTANCE = new Holder();

        final LibIbverbs lib;
        final String failure;

        private Holder()
        {
            LibIbverbs loaded = null;
            String why = null;
            try
            {
                loaded = LibraryLoader.create(LibIbverbs.class).failImmediately().load(SONAME);
            }
            catch (final LinkageError ex)
            {
                // jnr appends the names and search paths it tried on further lines; the first line says it all.
                why = String.valueOf(ex.getMessage()).split("\n", 2)[0];
            }
            lib = loaded;
            failure = why;
        }
    }
}
