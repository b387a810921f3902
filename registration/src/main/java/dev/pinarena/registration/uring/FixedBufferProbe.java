package dev.pinarena.registration.uring;

import dev.pinarena.registration.Region;
import dev.pinarena.registration.os.internal.Linux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Sends bytes of a registered region through io_uring WRITE_FIXED into a temporary file and reads the file
 * back: what the kernel sends from the pinned pages, not what the virtual mapping shows now. An HCA's DMA
 * reads the same pinned pages, so this is how the demo and the tests see what a NIC would put on the wire.
 */
public final class FixedBufferProbe
{
    private FixedBufferProbe()
    {
    }

    /**
     * @param registrar the registrar that made {@code region}.
     * @param region    a live region.
     * @param address   first byte to send, inside the region.
     * @param length    bytes to send (within one fixed buffer).
     * @return the bytes the kernel wrote.
     * @throws IllegalStateException if the file cannot be opened or the write is short.
     */
    public static byte[] send(final IoUringRegistrar registrar, final Region region, final long address, final int length)
    {
        try
        {
            final Path file = Files.createTempFile("pinarena-probe", ".bin");
            try
            {
                final int fd = Linux.libc().open(file.toString(), Linux.O_RDWR | Linux.O_CLOEXEC, 0);
                if (fd < 0)
                {
                    throw new IllegalStateException("open " + file + ": errno " + Linux.errno());
                }
                try
                {
                    final int written = registrar.ring().writeFixed(
                        fd, address, length, 0, registrar.bufferIndex(region, address));
                    if (written != length)
                    {
                        throw new IllegalStateException("WRITE_FIXED returned " + written + " for " + length + " bytes");
                    }
                }
                finally
                {
                    Linux.libc().close(fd);
                }
                return Files.readAllBytes(file);
            }
            finally
            {
                Files.deleteIfExists(file);
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
