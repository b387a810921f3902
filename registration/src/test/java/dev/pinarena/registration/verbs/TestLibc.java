package dev.pinarena.registration.verbs;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.size_t;

/**
 * The few libc calls the verbs tests need: anonymous mappings to register. Declared apart from
 * {@code os.LibC}, so a failing verbs test points at the verbs registrar and not at the OS layer.
 */
public interface TestLibc
{
    /** {@code PROT_READ | PROT_WRITE}. */
    int PROT_READ_WRITE = 0x1 | 0x2;
    /** {@code MAP_PRIVATE | MAP_ANONYMOUS}. */
    int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    /** {@code MAP_FAILED}. */
    long MAP_FAILED = -1L;

    /** The loaded binding. */
    TestLibc LIBC = LibraryLoader.create(TestLibc.class).load("c");

    /**
     * The hint is a {@link Pointer}, not a {@code long}: with six primitive arguments jnr-ffi 2.2.17 takes a
     * fast path that passes garbage as the sixth (the offset), and glibc then fails with EINVAL.
     *
     * @param addr   hint, null.
     * @param length bytes.
     * @param prot   protection.
     * @param flags  flags.
     * @param fd     -1.
     * @param offset 0.
     * @return the address or {@link #MAP_FAILED}.
     */
    @SaveError
    long mmap(Pointer addr, @size_t long length, int prot, int flags, int fd, long offset);

    /**
     * @param addr   start.
     * @param length bytes.
     * @return 0 or -1.
     */
    @SaveError
    int munmap(long addr, @size_t long length);

    /**
     * Maps anonymous read-write memory.
     *
     * @param length bytes.
     * @return the page-aligned address.
     */
    static long map(final long length)
    {
        final long address = LIBC.mmap(null, length, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0);
        if (address == MAP_FAILED)
        {
            throw new IllegalStateException(
                "mmap(" + length + ") failed: errno " + jnr.ffi.Runtime.getRuntime(LIBC).getLastError());
        }
        return address;
    }

    /**
     * Unmaps a range from {@link #map(long)}.
     *
     * @param address start.
     * @param length  bytes.
     */
    static void unmap(final long address, final long length)
    {
        if (LIBC.munmap(address, length) != 0)
        {
            throw new IllegalStateException("munmap failed: errno " + jnr.ffi.Runtime.getRuntime(LIBC).getLastError());
        }
    }

    /**
     * @param field a {@code /proc/self/status} field such as {@code VmPin}.
     * @return its value in kB.
     */
    static long procStatusKb(final String field)
    {
        try
        {
            for (final String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status")))
            {
                if (line.startsWith(field + ":"))
                {
                    return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]);
                }
            }
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
        throw new IllegalStateException("no " + field + " in /proc/self/status");
    }
}
