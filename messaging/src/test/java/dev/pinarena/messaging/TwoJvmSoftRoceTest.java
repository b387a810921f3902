package dev.pinarena.messaging;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Two JVMs on the Soft-RoCE testbed (testbed/run-junit): this one sends, a second one ({@link ReceiverMain})
 * receives, over UCX's RC verbs transport on rxe0. Every byte of every active message, put and get (64 B to
 * 4 MiB) is checked; rxe0's packet counter must have counted at least one packet per 4 KiB moved; neither
 * JVM may map memory in UCX after the first round.
 */
@Tag("softroce")
class TwoJvmSoftRoceTest
{
    private static final Path RXE_COUNTERS = Paths.get("/sys/class/infiniband/rxe0/ports/1/hw_counters");
    private static final String HOST = "10.0.2.15";
    private static final int PORT = 13337;
    private static final int ROUNDS = 3;
    /** The largest RoCE MTU: no packet carries more payload, so bytes / 4096 is a floor on the packet count. */
    private static final long MAX_MTU = 4096;

    @Test
    void twoJvmsMoveCheckedBytesOverRxe0WithoutRegisteringPerMessage() throws Exception
    {
        if (!Files.isDirectory(RXE_COUNTERS))
        {
            if ("1".equals(System.getenv("PINARENA_REQUIRE_RDMA")))
            {
                fail("no rxe0 counters at " + RXE_COUNTERS + ": the testbed has no Soft-RoCE device");
            }
            Assumptions.abort("skipped: no rxe0 (run through testbed/run-junit)");
        }
        final long sentBefore = counter("sent_pkts");
        final long receivedBefore = counter("rcvd_pkts");

        final Process receiver = startReceiver();
        final List<String> receiverLines = new CopyOnWriteArrayList<>();
        final CountDownLatch listening = new CountDownLatch(1);
        final Thread reader = new Thread(() -> readLines(receiver, receiverLines, listening), "receiver-stdout");
        reader.setDaemon(true);
        reader.start();
        try
        {
            assertTrue(listening.await(180, TimeUnit.SECONDS), "the receiver JVM did not start listening: " + receiverLines);

            final long senderMaps;
            final long receiverMaps;
            final long bytesMoved;
            try (ArenaNode node = ArenaNode.open(NodeConfig.softRoce()))
            {
                final CheckingSender sender = new CheckingSender(node, () -> { });
                sender.connect(new InetSocketAddress(HOST, PORT));
                sender.round(0);
                senderMaps = node.registrar().memMapCalls();
                receiverMaps = sender.peerMemMapCalls();
                final long warmBytes = sender.bytesMoved();
                for (int round = 1; round <= ROUNDS; round++)
                {
                    sender.round(round);
                }
                assertEquals(senderMaps, node.registrar().memMapCalls(), "the sender mapped memory after warm-up");
                assertEquals(receiverMaps, sender.peerMemMapCalls(), "the receiver mapped memory after warm-up");
                bytesMoved = sender.bytesMoved();
                System.out.printf("checked %d bytes (%d after warm-up) in %d active messages, puts and gets each;" +
                    " ucp_mem_map calls: sender %d, receiver %d, none after warm-up%n",
                    bytesMoved, bytesMoved - warmBytes, (ROUNDS + 1) * CheckProtocol.SIZES.length, senderMaps,
                    receiverMaps);
                sender.bye();
                sender.close();
            }
            assertTrue(receiver.waitFor(180, TimeUnit.SECONDS), "the receiver JVM did not exit");
            reader.join(10_000);
            assertEquals(0, receiver.exitValue(), "receiver exit status; its output: " + receiverLines);
            assertTrue(receiverLines.stream().anyMatch(l -> l.startsWith("RECEIVER DONE")), receiverLines.toString());

            final long sent = counter("sent_pkts") - sentBefore;
            final long received = counter("rcvd_pkts") - receivedBefore;
            System.out.printf("rxe0 sent_pkts +%d, rcvd_pkts +%d for %d bytes moved%n", sent, received, bytesMoved);
            assertTrue(sent >= bytesMoved / MAX_MTU,
                "rxe0 sent " + sent + " packets for " + bytesMoved + " bytes: the bytes did not go over rxe0");
            assertTrue(received >= bytesMoved / MAX_MTU, "rxe0 received " + received + " packets");
        }
        finally
        {
            receiver.destroyForcibly();
        }
    }

    private static Process startReceiver() throws IOException
    {
        final String classPath = "target/test-classes:target/classes:" +
            Files.readString(Paths.get("target/softroce-cp.txt")).trim();
        final String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", classPath, ReceiverMain.class.getName(), HOST, Integer.toString(PORT))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    }

    private static void readLines(final Process process, final List<String> lines, final CountDownLatch listening)
    {
        try (BufferedReader in = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = in.readLine()) != null)
            {
                lines.add(line);
                System.out.println("[receiver] " + line);
                if (line.equals("LISTENING"))
                {
                    listening.countDown();
                }
            }
        }
        catch (final IOException ex)
        {
            lines.add("(reading the receiver's output failed: " + ex + ")");
        }
    }

    private static long counter(final String name) throws IOException
    {
        return Long.parseLong(Files.readString(RXE_COUNTERS.resolve(name)).trim());
    }
}
