package dev.pinarena.registration.testkit;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.os.MemlockLimit;
import dev.pinarena.registration.os.PageBacking;
import dev.pinarena.registration.uring.IoUringRegistrar;
import dev.pinarena.registration.verbs.VerbsRegistrar;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The memlock-exhaustion child: a JVM without {@code CAP_IPC_LOCK} (root would pass the limit) under a small
 * {@code RLIMIT_MEMLOCK} registers pieces of one mapping with one registrar until the kernel refuses, then
 * deregisters what succeeded and reports, one {@code key=value} line each, what the parent asserts:
 * {@code cap_ipc_lock}, {@code limit}, {@code vmpin_start}, {@code refused_after} (or {@code refused=never}),
 * {@code message}, {@code call}, {@code errno}, {@code vmpin_at_failure}, {@code regions_live},
 * {@code vmpin_after}, {@code pinned_after}, {@code regions_after}, {@code done}.
 * <p>
 * {@link #run} starts it ({@code prlimit} sets the limit, {@code setpriv} drops the capability).
 */
public final class MemlockChild
{
    /** The registrar a child uses. */
    public enum Kind
    {
        /** io_uring fixed buffers ({@link IoUringRegistrar}). */
        URING,
        /** ibv_reg_mr on the first RDMA device ({@link VerbsRegistrar}). */
        VERBS
    }

    private static final long MAPPING = 64L << 20;

    private MemlockChild()
    {
    }

    /**
     * Runs the child and waits for it.
     *
     * @param kind  which registrar.
     * @param limit {@code RLIMIT_MEMLOCK}, soft and hard, in bytes.
     * @param piece bytes per registration.
     * @return what it reported.
     */
    public static ChildJvm run(final Kind kind, final long limit, final long piece) throws IOException, InterruptedException
    {
        return ChildJvm.run(
            List.of("prlimit", "--memlock=" + limit + ":" + limit,
                "setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock"),
            List.of(), MemlockChild.class, kind.name(), Long.toString(piece));
    }

    /**
     * @param args registrar kind ({@link Kind}) and bytes per registration.
     */
    public static void main(final String[] args)
    {
        final Kind kind = Kind.valueOf(args[0]);
        final long piece = Long.parseLong(args[1]);
        final MemlockLimit limit = MemlockLimit.read();
        System.out.println("cap_ipc_lock=" + limit.capIpcLock());
        System.out.println("limit=" + limit.softBytes());
        System.out.println("vmpin_start=" + MemlockLimit.statusBytes("VmPin"));
        final MappedChunk mapping = ChunkMapper.map(MAPPING, List.of(PageBacking.SMALL));
        final List<Region> regions = new ArrayList<>();
        // No budget of our own: the kernel's RLIMIT_MEMLOCK is what must refuse.
        final PinBudget unlimited = new PinBudget(PinBudget.UNLIMITED);
        try (Registrar registrar = kind == Kind.URING ? IoUringRegistrar.open(unlimited) : VerbsRegistrar.open(null, unlimited))
        {
            try
            {
                for (long offset = 0; offset < mapping.size(); offset += piece)
                {
                    regions.add(registrar.register(mapping.address() + offset, piece));
                }
                System.out.println("refused=never");
            }
            catch (final RegistrationException ex)
            {
                System.out.println("refused_after=" + registrar.pinnedBytes());
                System.out.println("message=" + ex.getMessage());
                System.out.println("call=" + ex.call());
                System.out.println("errno=" + ex.errno());
            }
            System.out.println("vmpin_at_failure=" + MemlockLimit.statusBytes("VmPin"));
            System.out.println("regions_live=" + registrar.regionCount());
            for (final Region region : regions)
            {
                registrar.deregister(region);
            }
            System.out.println("pinned_after=" + registrar.pinnedBytes());
            System.out.println("regions_after=" + registrar.regionCount());
        }
        System.out.println("vmpin_after=" + MemlockLimit.statusBytes("VmPin"));
        mapping.unmap();
        System.out.println("done=true");
    }
}
