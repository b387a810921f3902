package dev.pinarena.allocator;

import dev.pinarena.registration.testkit.VerbsLoopback;
import dev.pinarena.registration.verbs.VerbsRegistrar;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.UncheckedIOException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a peer holding a remote buffer's key reaches, over real RDMA (rxe0 in testbed/softroce), every byte
 * checked: exactly its buffer (one byte before or after: remote access error), nothing once the buffer is
 * freed and its memory handed to a new buffer, and never a neighbouring buffer of the same chunk.
 * <p>
 * Run for both per-buffer modes: asked for windows, the arena uses them where the device keeps a peer inside
 * a window's bounds and otherwise per-buffer registrations (rdma_rxe: the latter, with the probe's reason);
 * asked for registrations, it uses them.
 */
@Tag("softroce")
class RemoteKeysSoftRoceTest
{
    private static final int SIZE = 1000;       // not a multiple of the granule: the key stops mid-block

    private VerbsRegistrar registrar;
    private PinnedArena arena;
    private VerbsLoopback peer;

    private void open(final RemoteKeyMode asked)
    {
        registrar = SoftRoceRegistrar.open();
        arena = PinnedArena.open(registrar, TestArenas.config(64L << 20).withRemoteKeys(asked));
        try
        {
            peer = VerbsLoopback.open(registrar.protectionDomain(), 2 * SIZE);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    @AfterEach
    void close()
    {
        if (peer != null)
        {
            peer.close();
        }
        if (arena != null)
        {
            arena.close(true);
        }
        if (registrar != null)
        {
            registrar.close();
        }
    }

    @ParameterizedTest
    @EnumSource(value = RemoteKeyMode.class, names = {"WINDOW", "MR"})
    void aKeyReachesExactlyItsBufferAndDiesWithIt(final RemoteKeyMode asked)
    {
        open(asked);
        final long before = arena.allocateRemote(SIZE);
        final long buffer = arena.allocateRemote(SIZE);
        final long after = arena.allocateRemote(SIZE);
        final RemoteKeyMode used = arena.remoteKeyMode();
        System.out.println("asked for " + asked + " keys: " + used + " (" + arena.remoteKeyReason() + ")");
        assertTrue(used == asked || (asked == RemoteKeyMode.WINDOW && used == RemoteKeyMode.MR &&
            !arena.remoteKeyReason().isEmpty()), "asked " + asked + ", got " + used + ": " + arena.remoteKeyReason());
        assertSame(arena.region(before), arena.region(after), "three buffers of one chunk");
        final int key = arena.rkey(buffer);
        final int beforeKey = arena.rkey(before);
        final int afterKey = arena.rkey(after);
        assertNotEquals(0, key);
        assertNotEquals(arena.region(buffer).rkey(), key, "not the chunk's key");
        fill(before, 'B');
        fill(after, 'A');

        // exactly the buffer: every byte written and read back through the key
        for (int i = 0; i < SIZE; i++)
        {
            peer.local().putByte(i, (byte)(i * 7 + 1));
        }
        assertEquals(VerbsLoopback.SUCCESS, peer.write(buffer, SIZE, key), "WRITE of the whole buffer");
        final UnsafeBuffer mine = new UnsafeBuffer(buffer, SIZE);
        for (int i = 0; i < SIZE; i++)
        {
            assertEquals((byte)(i * 7 + 1), mine.getByte(i), "byte " + i + " written by the peer");
        }
        for (int i = 0; i < SIZE; i++)
        {
            mine.putByte(i, (byte)(i * 3 + 2));
        }
        peer.local().setMemory(0, SIZE, (byte)0);
        assertEquals(VerbsLoopback.SUCCESS, peer.read(buffer, SIZE, key), "READ of the whole buffer");
        for (int i = 0; i < SIZE; i++)
        {
            assertEquals((byte)(i * 3 + 2), peer.local().getByte(i), "byte " + i + " read by the peer");
        }
        assertEquals(VerbsLoopback.SUCCESS, peer.read(buffer + SIZE - 1, 1, key), "its last byte");

        // one byte outside, either way, and the neighbours with each other's keys
        denied(buffer - 1, 1, key, "one byte before the buffer");
        denied(buffer + SIZE, 1, key, "one byte after the buffer");
        denied(buffer - 1, SIZE, key, "the buffer shifted one byte down");
        denied(buffer, SIZE + 1, key, "the buffer and one byte more");
        denied(before, SIZE, key, "the buffer before it, with its key");
        denied(after, SIZE, key, "the buffer after it, with its key");
        denied(buffer, SIZE, beforeKey, "the buffer, with the key of the one before");
        denied(buffer, SIZE, afterKey, "the buffer, with the key of the one after");
        denied(after, SIZE, beforeKey, "one exposed buffer with another's key");
        assertAll(before, 'B', "the buffer before");
        assertAll(after, 'A', "the buffer after");

        final long again = freeThenReuse(buffer, key);
        assertThrows(NoRemoteKeyException.class, () -> arena.rkey(again + 64), "an interior address has no key");
        arena.free(again);
        arena.free(before);
        arena.free(after);
        denied(after, SIZE, afterKey, "a freed neighbour with its old key");
    }

    /**
     * Memory windows themselves, bound and revoked through bindings-c's pool, with the bounds check skipped
     * (rdma_rxe fails it, so the arena would use registrations): a window's key reaches its buffer, dies on
     * free before the bytes are reused, and a new key serves the new buffer. Whether the bounds hold is the
     * device's, and is only reported here.
     */
    @Test
    void aWindowKeyDiesOnFreeAndReuse()
    {
        System.setProperty(ExposedKeys.WINDOW_PROBE_PROPERTY, "false");
        try
        {
            open(RemoteKeyMode.WINDOW);
            assertEquals(RemoteKeyMode.WINDOW, arena.remoteKeyMode(), arena.remoteKeyReason());
        }
        finally
        {
            System.clearProperty(ExposedKeys.WINDOW_PROBE_PROPERTY);
        }
        final long buffer = arena.allocateRemote(SIZE);
        final long neighbour = arena.allocateRemote(SIZE);
        final int key = arena.rkey(buffer);
        assertNotEquals(arena.region(buffer).rkey(), key, "a window's key, not the chunk's");
        fill(neighbour, 'Z');
        for (int i = 0; i < SIZE; i++)
        {
            peer.local().putByte(i, (byte)(i * 5 + 3));
        }
        assertEquals(VerbsLoopback.SUCCESS, peer.write(buffer, SIZE, key), "WRITE through the window");
        final UnsafeBuffer mine = new UnsafeBuffer(buffer, SIZE);
        for (int i = 0; i < SIZE; i++)
        {
            assertEquals((byte)(i * 5 + 3), mine.getByte(i), "byte " + i + " written through the window");
        }
        peer.local().setMemory(0, SIZE, (byte)0);
        assertEquals(VerbsLoopback.SUCCESS, peer.read(buffer, SIZE, key), "READ through the window");
        for (int i = 0; i < SIZE; i++)
        {
            assertEquals((byte)(i * 5 + 3), peer.local().getByte(i), "byte " + i + " read through the window");
        }
        final int past = peer.read(buffer + SIZE, 1, key);
        System.out.println("READ one byte past a window with its key: status " + past + " (the device " +
            (past == VerbsLoopback.SUCCESS ? "does NOT enforce" : "enforces") + " window bounds)");
        final long again = freeThenReuse(buffer, key);
        assertAll(neighbour, 'Z', "the neighbour");
        arena.free(again);
        arena.free(neighbour);
    }

    /**
     * Frees the buffer and checks that its key died before the bytes were zeroed and handed to the next
     * buffer, which gets a new key that works and the old one does not.
     *
     * @return the new buffer, at the freed one's address.
     */
    private long freeThenReuse(final long buffer, final int key)
    {
        arena.free(buffer);
        assertAll(buffer, 0, "the freed buffer");
        denied(buffer, SIZE, key, "a freed buffer with its old key");
        denied(buffer, 1, key, "the first byte of a freed buffer with its old key");
        final long again = arena.allocateRemote(SIZE);
        assertEquals(buffer, again, "the freed memory is handed to the next buffer");
        final int newKey = arena.rkey(again);
        assertNotEquals(key, newKey, "a new key for the new buffer");
        fill(again, 'N');
        denied(again, SIZE, key, "the new buffer with the old buffer's key");
        assertAll(again, 'N', "the new buffer after the old key's attempts");
        assertEquals(VerbsLoopback.SUCCESS, peer.read(again, SIZE, newKey), "the new buffer with its own key");
        for (int i = 0; i < SIZE; i++)
        {
            assertEquals((byte)'N', peer.local().getByte(i), "byte " + i + " of the new buffer");
        }
        return again;
    }

    private void denied(final long address, final int length, final int key, final String what)
    {
        final int write = peer.write(address, length, key);
        assertEquals(VerbsLoopback.REMOTE_ACCESS_ERROR, write, "WRITE to " + what + ": status " + write);
        final int read = peer.read(address, length, key);
        assertEquals(VerbsLoopback.REMOTE_ACCESS_ERROR, read, "READ of " + what + ": status " + read);
    }

    private static void fill(final long address, final char c)
    {
        new UnsafeBuffer(address, SIZE).setMemory(0, SIZE, (byte)c);
    }

    private static void assertAll(final long address, final int c, final String what)
    {
        final UnsafeBuffer b = new UnsafeBuffer(address, SIZE);
        for (int i = 0; i < SIZE; i++)
        {
            assertEquals((byte)c, b.getByte(i), what + ": byte " + i);
        }
    }
}
