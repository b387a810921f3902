package dev.pinarena.cli;

import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.allocator.PinnedArena;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.os.internal.LibC;
import dev.pinarena.registration.os.internal.Linux;
import dev.pinarena.registration.os.MemlockLimit;
import dev.pinarena.registration.os.PageMap;
import dev.pinarena.registration.uring.FixedBufferProbe;
import dev.pinarena.registration.uring.IoUringRegistrar;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * {@code pinarena demo}: the seed scenario end to end, with a real kernel pin.
 * <p>
 * Every "send" is an io_uring WRITE_FIXED through the registration the cache returned, into a file that is
 * read back: the kernel sends the bytes of the pages it pinned, exactly as an HCA would DMA them.
 * <ol>
 *   <li>(a) glibc malloc + an address-keyed registration cache: malloc, register, free, malloc again at the
 *   same address, write new bytes, send through the cached registration → the old bytes go out, and the
 *   physical frames differ.</li>
 *   <li>(b) the same steps on pinarena memory — the Java arena, whose chunks are registered once and never
 *   returned to the OS → same address, same frames, the new bytes go out; and the same steps in native code with plain malloc/free,
 *   under glibc and then with the C malloc shim preloaded.</li>
 * </ol>
 * Exit status 1 if either (b) sent stale bytes; (a) failing to reproduce is reported but is not an error of
 * pinarena's.
 */
final class StaleRegistrationDemo
{
    /** Large enough that glibc serves it with its own mmap and returns it to the OS with munmap on free. */
    private static final long BUFFER_BYTES = 32L << 20;
    /** glibc mallopt parameter; fixing it stops glibc from raising the threshold after the first free. */
    private static final int M_MMAP_THRESHOLD = -3;
    private static final int MESSAGE_BYTES = 4096;
    private static final int MALLOC_ATTEMPTS = 8;
    /** The arena's buffer in (b): a run of arena pages, like a large message buffer. */
    private static final long ARENA_BUFFER_BYTES = 256L << 10;
    /** Enough for the demo's one chunk. */
    private static final long ARENA_CAP_BYTES = 64L << 20;

    private StaleRegistrationDemo()
    {
    }

    static int run(final String[] args, final PrintStream out)
    {
        out.println("pinarena demo — the stale registration hazard, with a real kernel pin (io_uring fixed buffers)");
        out.println();
        try (IoUringRegistrar registrar = IoUringRegistrar.open(MemlockLimit.read().defaultBudget());
            PageMap pageMap = PageMap.open())
        {
            final boolean reproduced = glibcWithAddressCache(registrar, pageMap, out);
            out.println();
            final boolean stale = pinarenaArena(registrar, pageMap, out);
            out.println();
            final NativeOutcome shim = throughTheShim(out);
            out.println();
            out.println("summary");
            out.println("  (a) glibc malloc + address-keyed cache: " +
                (reproduced ? "STALE bytes sent (the hazard, reproduced)" : "hazard not reproduced on this run"));
            out.println("  (b) pinarena memory:                     " +
                (stale ? "STALE bytes sent — pinarena is broken" : "new bytes sent, same physical frames"));
            out.println("  (b) native malloc through the shim:      " + shim.summary);
            return stale || shim.stale ? 1 : 0;
        }
    }

    private static boolean glibcWithAddressCache(
        final IoUringRegistrar registrar, final PageMap pageMap, final PrintStream out)
    {
        out.println("(a) glibc malloc + a registration cache keyed by virtual address");
        final LibC libc = Linux.libc();
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 20);
        final AddressKeyedCache cache = new AddressKeyedCache(registrar);

        final long first = libc.malloc(BUFFER_BYTES);
        final byte[] oldBytes = message("OLD bytes from the first malloc, freed since");
        write(first, oldBytes);
        final Region region = cache.get(first, MESSAGE_BYTES);
        final long frameBefore = pageMap.frame(first);
        out.printf("  malloc(%d MiB)            = 0x%x, frame 0x%x; registered on a cache miss: %s%n",
            BUFFER_BYTES >> 20, first, frameBefore, region);
        libc.free(first);
        out.println("  free                       glibc returns the pages to the OS (munmap); the pin keeps the old frames");

        long second = 0;
        for (int attempt = 0; attempt < MALLOC_ATTEMPTS && second != first; attempt++)
        {
            if (second != 0)
            {
                libc.free(second);
            }
            second = libc.malloc(BUFFER_BYTES);
        }
        if (second != first)
        {
            out.printf("  malloc again              = 0x%x: not the same address this time, so no stale hit%n", second);
            libc.free(second);
            cache.clear();
            return false;
        }
        final byte[] newBytes = message("NEW bytes written after the second malloc");
        write(second, newBytes);
        final long frameAfter = pageMap.frame(second);
        out.printf("  malloc again              = 0x%x (same address), frame 0x%x (%s)%n",
            second, frameAfter, frameAfter == frameBefore ? "same frame" : "a different frame");
        final Region cached = cache.get(second, MESSAGE_BYTES);
        out.printf("  cache lookup              %s (hits %d, misses %d)%n",
            cached == region ? "HIT: the old registration, no new pin" : "miss", cache.hits(), cache.misses());

        final byte[] sent = send(registrar, cached, second);
        final boolean stale = !Arrays.equals(sent, newBytes);
        out.printf("  send (WRITE_FIXED)        wire carried: \"%s\"%n", firstLine(sent));
        out.printf("  expected                  \"%s\"%n", firstLine(newBytes));
        out.println("  => " + (stale ? "STALE: the NIC would have sent the freed buffer's old contents" : "correct bytes"));
        cache.clear();
        libc.free(second);
        return stale && frameAfter != frameBefore;
    }

    private static boolean pinarenaArena(final IoUringRegistrar registrar, final PageMap pageMap, final PrintStream out)
    {
        out.println("(b) pinarena: the Java arena — chunks mapped and registered once, never returned to the OS while registered");
        try (PinnedArena arena = PinnedArena.open(registrar, ArenaConfig.defaults().withCapBytes(ARENA_CAP_BYTES)))
        {
            final long first = arena.allocate(ARENA_BUFFER_BYTES);
            final Region region = arena.region(first);
            write(first, message("OLD bytes from the first allocation, freed since"));
            final long frameBefore = pageMap.frame(first);
            out.printf("  allocate(%d KiB)          = 0x%x, frame 0x%x; keys from the arena: %s%n",
                ARENA_BUFFER_BYTES >> 10, first, frameBefore, region);
            arena.free(first);
            out.println("  free                       the buffer goes back to the arena; its chunk stays mapped and registered");
            final long second = arena.allocate(ARENA_BUFFER_BYTES);
            final byte[] newBytes = message("NEW bytes written after the second allocation");
            write(second, newBytes);
            final long frameAfter = pageMap.frame(second);
            out.printf("  allocate again            = 0x%x (%s), frame 0x%x (%s)%n", second,
                second == first ? "same address" : "another address", frameAfter,
                second != first ? "another buffer" : frameAfter == frameBefore ? "same frame" : "A DIFFERENT FRAME");
            final Region secondRegion = arena.region(second);
            final byte[] sent = send(registrar, secondRegion, second);
            final boolean stale = !Arrays.equals(sent, newBytes) || (second == first && frameAfter != frameBefore);
            out.printf("  send (WRITE_FIXED)        wire carried: \"%s\" (registrations made: %d)%n", firstLine(sent),
                registrar.regionCount());
            out.println("  => " + (stale ? "STALE bytes from pinarena memory" : "correct bytes"));
            arena.free(second);
            return stale;
        }
    }

    /** What the native part showed. */
    private record NativeOutcome(boolean stale, String summary)
    {
    }

    /**
     * Part (b) for native code: the same steps with plain malloc/free in a C program, once under glibc and
     * once with {@code LD_PRELOAD=libpinarena.so}. The binaries come from bindings-c's build, found through
     * the {@code pinarena.native.dir} system property (set by {@code ./pinarena}).
     */
    private static NativeOutcome throughTheShim(final PrintStream out)
    {
        out.println("(b) native code: the same steps with malloc/free in C, under glibc and under LD_PRELOAD=libpinarena.so");
        final String dir = System.getProperty("pinarena.native.dir");
        final Path demo = dir == null ? null : Path.of(dir, "pinarena-stale-demo");
        final Path shim = dir == null ? null : Path.of(dir, "libpinarena.so");
        if (demo == null || !Files.isExecutable(demo) || !Files.isRegularFile(shim))
        {
            final String why = "not run: pinarena-stale-demo and libpinarena.so not found in " + dir +
                " (build them: mvn -B -DskipTests -pl bindings-c package; ./pinarena demo does)";
            out.println("  " + why);
            return new NativeOutcome(false, why);
        }
        final int glibc = runNative(demo, null, out);
        final int pinarena = runNative(demo, shim, out);
        final boolean stale = pinarena != 0;
        return new NativeOutcome(stale, (stale ? "exit " + pinarena + ": STALE bytes or a failed run — the shim is broken" :
            "new bytes sent, same physical frames") + (glibc == 1 ? " (glibc alone: stale, as in (a))" : ""));
    }

    private static int runNative(final Path demo, final Path preload, final PrintStream out)
    {
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(demo.toString()).redirectErrorStream(true);
            if (preload != null)
            {
                builder.environment().put("LD_PRELOAD", preload.toString());
            }
            final Process process = builder.start();
            for (final String line : new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split("\n"))
            {
                out.println("  " + line);
            }
            return process.waitFor();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("running " + demo, ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + demo, ex);
        }
    }

    private static byte[] message(final String text)
    {
        final byte[] line = (text + "\n").getBytes(StandardCharsets.US_ASCII);
        final byte[] bytes = new byte[MESSAGE_BYTES];
        for (int i = 0; i < bytes.length; i++)
        {
            bytes[i] = line[i % line.length];
        }
        return bytes;
    }

    private static void write(final long address, final byte[] bytes)
    {
        new UnsafeBuffer(address, bytes.length).putBytes(0, bytes);
    }

    private static String firstLine(final byte[] bytes)
    {
        final String text = new String(bytes, StandardCharsets.US_ASCII);
        final int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }

    private static byte[] send(final IoUringRegistrar registrar, final Region region, final long address)
    {
        return FixedBufferProbe.send(registrar, region, address, MESSAGE_BYTES);
    }
}
