package dev.pinarena.perf.curve;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.os.MappingFailedException;
import dev.pinarena.registration.os.PageBacking;
import dev.pinarena.registration.select.RegistrarKind;
import dev.pinarena.registration.select.RegistrarSelector;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Measures what one register + deregister costs, from 4 KiB to a maximum size, on 4 KiB pages and on 2 MiB
 * hugepages, with the registrar a user names (io_uring on this host, verbs on an RDMA host or the testbed).
 * <p>
 * Usage: {@code RegistrationCostCurve REGISTRAR MAX_MIB REPS OUT.csv}. Writes one CSV row per (backing, size):
 * {@code backend,backing,bytes,reps,min_us,median_us,max_us,us_per_mib}, the columns the report reads.
 * The chunk is mapped and populated before timing, so the figures are the pin alone (what a cache miss
 * costs an application whose buffer is already in use), not page faults.
 */
public final class RegistrationCostCurve
{
    /** CSV header shared with the C harness on the testbed. */
    public static final String HEADER = "backend,backing,bytes,reps,min_us,median_us,max_us,us_per_mib";

    private static final long SMALLEST = 4096;
    private static final long STEP = 4;

    private RegistrationCostCurve()
    {
    }

    /**
     * @param args registrar kind, max MiB, repetitions, output file.
     * @throws IOException if the output cannot be written.
     */
    public static void main(final String[] args) throws IOException
    {
        if (args.length != 4)
        {
            System.err.println("usage: RegistrationCostCurve auto|verbs|io_uring|mlock MAX_MIB REPS OUT.csv");
            System.exit(2);
        }
        final RegistrarKind kind = RegistrarKind.fromLabel(args[0]);
        final long max = Long.parseLong(args[1]) << 20;
        final int reps = Integer.parseInt(args[2]);
        final Path out = Path.of(args[3]);
        final RegistrarSelector choice = RegistrarSelector.open(kind, null, new PinBudget(PinBudget.UNLIMITED));
        try (Registrar registrar = choice.registrar();
            PrintStream csv = new PrintStream(Files.newOutputStream(out), true, StandardCharsets.UTF_8))
        {
            System.err.println("registration cost curve with " + registrar);
            csv.println(HEADER);
            for (final PageBacking backing : List.of(PageBacking.SMALL, PageBacking.HUGETLB_2M))
            {
                for (long bytes = SMALLEST; bytes <= max; bytes *= STEP)
                {
                    final String row = measure(registrar, backing, bytes, reps);
                    csv.println(row);
                    System.err.println("  " + row);
                }
            }
        }
    }

    /**
     * Maps a chunk of {@code bytes} (at least 2 MiB) with one backing and times {@code reps} register +
     * deregister pairs of its first {@code bytes}.
     *
     * @param registrar the backend to time.
     * @param backing   page backing of the chunk.
     * @param bytes     bytes registered each time.
     * @param reps      repetitions (at least 1).
     * @return one CSV row; an unmappable size gives a row with the reason in the last column.
     */
    public static String measure(final Registrar registrar, final PageBacking backing, final long bytes, final int reps)
    {
        final MappedChunk chunk;
        try
        {
            chunk = ChunkMapper.map(Math.max(bytes, ChunkMapper.MIN_CHUNK_SIZE), List.of(backing));
        }
        catch (final MappingFailedException ex)
        {
            return registrar.name() + "," + backing.label() + "," + bytes + ",0,,,,could not map: " +
                ex.getMessage().replace(',', ';');
        }
        try
        {
            final double[] micros = new double[reps];
            for (int i = 0; i < reps; i++)
            {
                final long start = System.nanoTime();
                final Region region = registrar.register(chunk.address(), bytes);
                registrar.deregister(region);
                micros[i] = (System.nanoTime() - start) / 1000.0;
            }
            Arrays.sort(micros);
            final double median = micros[reps / 2];
            return String.format("%s,%s,%d,%d,%.1f,%.1f,%.1f,%.2f", registrar.name(), backing.label(), bytes, reps,
                micros[0], median, micros[reps - 1], median / (bytes / (double)(1L << 20)));
        }
        finally
        {
            chunk.unmap();
        }
    }
}
