package dev.pinarena.allocator;

import dev.pinarena.registration.Region;
import dev.pinarena.registration.os.Linux;
import dev.pinarena.registration.uring.IoUringRegistrar;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Test helper: what the kernel sends from a registered region — io_uring WRITE_FIXED of the pinned pages
 * into a temporary file, read back.
 */
final class WriteFixedProbe
{
    private WriteFixedProbe()
    {
    }

    static byte[] send(final IoUringRegistrar registrar, final Region region, final long address, final int length)
    {
        try
        {
            final Path file = Files.createTempFile("pinarena-arena", ".bin");
            try
            {
                final int fd = Linux.libc().open(file.toString(), Linux.O_RDWR | Linux.O_CLOEXEC, 0);
                if (fd < 0)
                {
                    throw new IllegalStateException("open " + file + ": errno " + Linux.errno());
                }
                try
                {
                    final int written = registrar.ring().writeFixed(fd, address, length, 0, registrar.bufferIndex(region, address));
                    if (written != length)
                    {
                        throw new IllegalStateException("WRITE_FIXED wrote " + written + " of " + length);
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
