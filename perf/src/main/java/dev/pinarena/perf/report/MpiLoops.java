package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The MPI registration-savings loops run on the Soft-RoCE testbed ({@code bindings-c/tests/mpi/run.sh savings}):
 * {@code transport,allocator,loop,size,iterations,registrations,deregistrations,addresses,seconds,bad_bytes},
 * one row per loop and allocator.
 */
public final class MpiLoops
{
    /**
     * One loop under one allocator.
     *
     * @param transport       Open MPI's RDMA path ({@code ofi}: pml cm + mtl ofi, verbs;ofi_rxm).
     * @param allocator       {@code glibc}, {@code glibc-fixed} (mmap threshold 1 MiB) or {@code pinarena}.
     * @param loop            {@code churn} (malloc, send, free per message) or {@code reuse} (one buffer).
     * @param size            message bytes.
     * @param iterations      messages sent.
     * @param registrations   memory registrations the sender's MPI made inside the loop.
     * @param deregistrations registrations it dropped inside the loop (invalidations).
     * @param seconds         the loop's wall time in the emulated guest.
     * @param badBytes        bytes the receiver found wrong.
     */
    public record Row(String transport, String allocator, String loop, long size, long iterations, long registrations,
        long deregistrations, double seconds, long badBytes)
    {
    }

    private final List<Row> rows = new ArrayList<>();

    private MpiLoops()
    {
    }

    /**
     * @param file the CSV; a missing file gives no rows.
     * @return the rows in file order.
     * @throws IOException if the file cannot be read.
     * @throws CsvFormatException for a row that is not of the format, naming the file, line and column.
     */
    public static MpiLoops read(final Path file) throws IOException
    {
        final MpiLoops loops = new MpiLoops();
        for (final CsvRows.Row row : CsvRows.read(file))
        {
            loops.rows.add(new Row(row.text("transport"), row.text("allocator"), row.text("loop"), row.longValue("size"),
                row.longValue("iterations"), row.longValue("registrations"), row.longValue("deregistrations"),
                row.doubleValue("seconds"), row.longValue("bad_bytes")));
        }
        return loops;
    }

    /**
     * @return every row, in file order.
     */
    public List<Row> rows()
    {
        return rows;
    }

    /**
     * @param allocator an allocator name.
     * @param loop      a loop name.
     * @param size      message bytes.
     * @return the row, or null if not measured.
     */
    public Row find(final String allocator, final String loop, final long size)
    {
        for (final Row row : rows)
        {
            if (row.allocator().equals(allocator) && row.loop().equals(loop) && row.size() == size)
            {
                return row;
            }
        }
        return null;
    }
}
