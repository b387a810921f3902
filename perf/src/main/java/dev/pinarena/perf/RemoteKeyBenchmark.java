package dev.pinarena.perf;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.allocator.PinnedArena;
import dev.pinarena.allocator.RemoteKeyMode;
import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.verbs.VerbsRegistrar;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The price of a key that reaches exactly one buffer and dies with it: allocate + expose (take its rkey) +
 * free of one remote buffer, on a verbs device (the Soft-RoCE testbed: emulated, only ratios mean anything),
 * per way:
 * <ul>
 * <li>{@link #window}: {@link RemoteKeyMode#WINDOW}, a memory window bound to the buffer and revoked on free
 * (the bounds probe skipped, so the mechanism is measured also on rdma_rxe, which fails it);</li>
 * <li>{@link #perBufferMr}: {@link RemoteKeyMode#MR}, a registration of exactly the buffer;</li>
 * <li>{@link #chunkKey}: {@link RemoteKeyMode#CHUNK}, the remote chunk's one key (what the arena handed out
 * before: nothing per buffer, reaches the whole chunk, valid after free);</li>
 * <li>{@link #regMrOfBuffer}: what a program does without pinarena's remote scope: a local arena buffer and
 * {@code ibv_reg_mr} / {@code ibv_dereg_mr} of just that buffer.</li>
 * </ul>
 * The three remote ways zero the buffer on free (the arena's default); {@code regMrOfBuffer} does not.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class RemoteKeyBenchmark
{
    private static final long CHUNK = 4L << 20;
    private static final long CAP = 64L << 20;
    private static final int RIGHTS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    /** Buffer size in bytes. */
    @Param({"64", "4096", "65536"})
    public int size;

    private VerbsRegistrar registrar;
    private PinnedArena windows;
    private PinnedArena registrations;
    private PinnedArena chunks;

    /** Opens one registrar and an arena per way; decides each arena's key mode before measuring. */
    @Setup
    public void open()
    {
        registrar = VerbsRegistrar.open(null, new PinBudget(PinBudget.UNLIMITED));
        final ArenaConfig config = ArenaConfig.defaults().withChunkSize(CHUNK).withCapBytes(CAP);
        System.setProperty("pinarena.remoteWindowProbe", "false");
        windows = PinnedArena.open(registrar, config.withRemoteKeys(RemoteKeyMode.WINDOW));
        check(windows, RemoteKeyMode.WINDOW);
        registrations = PinnedArena.open(registrar, config.withRemoteKeys(RemoteKeyMode.MR));
        check(registrations, RemoteKeyMode.MR);
        chunks = PinnedArena.open(registrar, config.withRemoteKeys(RemoteKeyMode.CHUNK));
        check(chunks, RemoteKeyMode.CHUNK);
    }

    private static void check(final PinnedArena arena, final RemoteKeyMode expected)
    {
        arena.free(arena.allocateRemote(64));
        if (arena.remoteKeyMode() != expected)
        {
            throw new IllegalStateException("asked for " + expected + " keys, got " + arena.remoteKeyMode() + ": " +
                arena.remoteKeyReason());
        }
    }

    /** Releases everything. */
    @TearDown
    public void close()
    {
        windows.close(true);
        registrations.close(true);
        chunks.close(true);
        registrar.close();
    }

    /** @return the key, so the work is not dead code. */
    @Benchmark
    public int window()
    {
        return exposeAndFree(windows);
    }

    /** @return the key, so the work is not dead code. */
    @Benchmark
    public int perBufferMr()
    {
        return exposeAndFree(registrations);
    }

    /** @return the key, so the work is not dead code. */
    @Benchmark
    public int chunkKey()
    {
        return exposeAndFree(chunks);
    }

    /** @return the key, so the work is not dead code. */
    @Benchmark
    public int regMrOfBuffer()
    {
        final long address = chunks.allocate(size);
        final long mr = registrar.registerExact(address, size, RIGHTS);
        final int key = registrar.exactRkey(mr);
        registrar.deregisterExact(mr);
        chunks.free(address);
        return key;
    }

    private int exposeAndFree(final PinnedArena arena)
    {
        final long address = arena.allocateRemote(size);
        final int key = arena.rkey(address);
        arena.free(address);
        return key;
    }
}
