package dev.pinarena.messaging;

import dev.pinarena.registration.AgronaAccess;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * Active messages per second between two JVMs over rxe0, by where the sender's buffer comes from:
 * <ul>
 *   <li>{@code arena}: an arena buffer, its chunk's memory handle on every request (mapped once);</li>
 *   <li>{@code direct}: {@code ByteBuffer.allocateDirect} buffers (a ring of 4, reused) with no memory handle:
 *       UCX registers them through its registration cache (after the first use of each, cache hits);</li>
 *   <li>{@code per-message}: the same direct buffers mapped with {@code ucp_mem_map} before and unmapped after
 *       every message. UCX 1.13 maps through its registration cache, so remapping a buffer it has seen is a
 *       cache hit, not a device registration (the ibv_reg_mr count shows it);</li>
 *   <li>{@code fresh-direct}: a new {@code ByteBuffer.allocateDirect} per message, freed when its send completes,
 *       no memory handle: what a Java sender that allocates per message leaves to UCX's cache. Buffers large
 *       enough for malloc to mmap them come back at new addresses (after munmap), so UCX registers each one.</li>
 * </ul>
 * The receiver is the same for all modes. Modes alternate per repetition so drift of the emulated machine hits
 * all alike. Run in the testbed (target/test-classes on the classpath, cwd the messaging module):
 * {@code testbed/softroce -- java -cp … dev.pinarena.messaging.MessageRateBench [messages64k messages1m reps]}.
 */
public final class MessageRateBench
{
    private static final String HOST = "10.0.2.15";
    private static final int PORT = 13338;
    private static final int WINDOW = 8;
    private static final int DIRECT_RING = 4;
    private static final String[] MODES = {"arena", "direct", "per-message", "fresh-direct"};

    private static boolean synced;

    private MessageRateBench()
    {
    }

    /**
     * @param args optional: messages of 64 KiB, messages of 1 MiB, repetitions.
     * @throws Exception on failure.
     */
    public static void main(final String[] args) throws Exception
    {
        final int[] sizes = {64 << 10, 1 << 20};
        final int[] counts = {args.length > 0 ? Integer.parseInt(args[0]) : 400, args.length > 1 ? Integer.parseInt(args[1]) : 100};
        final int reps = args.length > 2 ? Integer.parseInt(args[2]) : 3;

        final String classPath = "target/test-classes:target/classes:" +
            Files.readString(Paths.get("target/softroce-cp.txt")).trim();
        final Process receiver = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
            AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE, "-cp", classPath,
            BenchReceiverMain.class.getName(), HOST, Integer.toString(PORT))
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        final BufferedReader out = new BufferedReader(new InputStreamReader(receiver.getInputStream(), StandardCharsets.UTF_8));
        if (!"LISTENING".equals(out.readLine()))
        {
            throw new IllegalStateException("receiver did not start");
        }

        try (ArenaNode node = ArenaNode.open(NodeConfig.softRoce()))
        {
            node.onMessage(BenchReceiverMain.SYNCED, (h, hl, data, ep) ->
            {
                synced = true;
                return UcsConstants.STATUS.UCS_OK;
            });
            final ArenaEndpoint peer = node.connect(new InetSocketAddress(HOST, PORT));
            final long arenaBuffer = node.arena().allocate(CheckProtocol.MAX_MESSAGE);
            final long header = node.arena().allocate(8);
            final ByteBuffer[] direct = new ByteBuffer[DIRECT_RING];
            for (int i = 0; i < DIRECT_RING; i++)
            {
                direct[i] = ByteBuffer.allocateDirect(CheckProtocol.MAX_MESSAGE);
            }
            final long[] sent = {0};
            final double[][][] rates = new double[sizes.length][MODES.length][reps];
            final long[][] verbsRegistrations = new long[sizes.length][MODES.length];

            for (int s = 0; s < sizes.length; s++)
            {
                for (int m = 0; m < MODES.length; m++)
                {
                    run(node, peer, MODES[m], sizes[s], Math.max(8, counts[s] / 10), arenaBuffer, direct, header, sent);
                }
                for (int r = 0; r < reps; r++)
                {
                    for (int m = 0; m < MODES.length; m++)
                    {
                        final long mapsBefore = node.registrar().memMapCalls();
                        final long verbsBefore = VerbsRegistrationCounter.registrations();
                        final long start = System.nanoTime();
                        run(node, peer, MODES[m], sizes[s], counts[s], arenaBuffer, direct, header, sent);
                        rates[s][m][r] = counts[s] * 1e9 / (System.nanoTime() - start);
                        verbsRegistrations[s][m] += VerbsRegistrationCounter.registrations() - verbsBefore;
                        if (m == 0 && node.registrar().memMapCalls() != mapsBefore)
                        {
                            throw new IllegalStateException("the arena mode mapped memory during the measurement");
                        }
                    }
                }
            }
            for (int s = 0; s < sizes.length; s++)
            {
                final double arena = median(rates[s][0]);
                System.out.printf("%7d B: arena %.1f msg/s, direct (UCX rcache) %.1f msg/s, per-message ucp_mem_map %.1f msg/s," +
                    " fresh allocateDirect %.1f msg/s; arena/direct %.2f, arena/per-message %.2f, arena/fresh %.2f" +
                    " (medians of %d)%n",
                    sizes[s], arena, median(rates[s][1]), median(rates[s][2]), median(rates[s][3]),
                    arena / median(rates[s][1]), arena / median(rates[s][2]), arena / median(rates[s][3]), reps);
                System.out.printf("%7d B: sender ibv_reg_mr calls while measured (%d messages per mode): arena %d," +
                    " direct %d, per-message %d, fresh %d%s%n", sizes[s], (long)counts[s] * reps, verbsRegistrations[s][0],
                    verbsRegistrations[s][1], verbsRegistrations[s][2], verbsRegistrations[s][3],
                    VerbsRegistrationCounter.registrations() == VerbsRegistrationCounter.NOT_COUNTED ?
                    " (not counted: preload " + VerbsRegistrationCounter.LIBRARY + ")" : "");
            }
            new UnsafeBuffer(header, 8).putLong(0, 0);
            node.await(peer.send(BenchReceiverMain.STOP, header, 8, header, 0, null));
            node.await(peer.flush(null));
            System.out.println("sender ucp_mem_map calls: " + node.registrar().memMapCalls() + " (arena chunks)");
            System.out.println("[receiver] " + out.readLine());
            receiver.waitFor();
            peer.close();
        }
    }

    private static void run(
        final ArenaNode node, final ArenaEndpoint peer, final String mode, final int size, final int count,
        final long arenaBuffer, final ByteBuffer[] direct, final long header, final long[] sent) throws Exception
    {
        final UcpRequest[] window = new UcpRequest[WINDOW];
        final UcpMemory[] mapped = new UcpMemory[WINDOW];
        final ByteBuffer[] fresh = new ByteBuffer[WINDOW];
        for (int i = 0; i < count; i++)
        {
            final int slot = i % WINDOW;
            if (window[slot] != null)
            {
                node.await(window[slot]);
                if (mapped[slot] != null)
                {
                    mapped[slot].deregister();
                    mapped[slot] = null;
                }
                if (fresh[slot] != null)
                {
                    BufferUtil.free(fresh[slot]);
                    fresh[slot] = null;
                }
            }
            final long address = UcxUtils.getAddress(direct[i % DIRECT_RING]);
            switch (mode)
            {
                case "arena":
                    window[slot] = peer.send(BenchReceiverMain.DATA, 0, 0, arenaBuffer, size, null);
                    break;
                case "direct":
                    window[slot] = peer.sendUnregistered(BenchReceiverMain.DATA, 0, 0, address, size, null);
                    break;
                case "fresh-direct":
                    fresh[slot] = ByteBuffer.allocateDirect(size);
                    window[slot] = peer.sendUnregistered(
                        BenchReceiverMain.DATA, 0, 0, UcxUtils.getAddress(fresh[slot]), size, null);
                    break;
                default:
                    mapped[slot] = node.registrar().context().memoryMap(new UcpMemMapParams()
                        .setAddress(address).setLength(size)
                        .setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST));
                    window[slot] = peer.endpoint().sendAmNonBlocking(BenchReceiverMain.DATA, 0, 0, address, size, 0,
                        null, new HostMemoryParams().with(mapped[slot]));
                    break;
            }
        }
        for (int slot = 0; slot < WINDOW; slot++)
        {
            if (window[slot] != null)
            {
                node.await(window[slot]);
            }
            if (mapped[slot] != null)
            {
                mapped[slot].deregister();
            }
            if (fresh[slot] != null)
            {
                BufferUtil.free(fresh[slot]);
            }
        }
        sent[0] += count;
        synced = false;
        new UnsafeBuffer(header, 8).putLong(0, sent[0]);
        node.await(peer.send(BenchReceiverMain.SYNC, header, 8, header, 0, null));
        while (!synced)
        {
            node.progress();
        }
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
