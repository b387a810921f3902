package dev.pinarena.messaging;

import dev.pinarena.registration.AgronaAccess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Two JVMs on the Soft-RoCE testbed (testbed/run-junit), {@link SenderMain} and {@link ReceiverMain}, over UCX's
 * RC verbs transport on rxe0. Every byte of every active message, put and get (64 B to 4 MiB) is checked by
 * them; this test checks that rxe0's packet counters counted at least one packet per 4 KiB moved, and that
 * after the first round neither JVM mapped memory in UCX ({@code ucp_mem_map}) nor registered any with the
 * device ({@code ibv_reg_mr}, counted by bindings-c's preloaded libpinarena-regcount.so in both JVMs).
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
    private static final long TIMEOUT_S = 600;

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
        final String counter = VerbsRegistrationCounter.libraryToPreload();
        assertNotNull(counter, VerbsRegistrationCounter.LIBRARY + " is missing: the module's build makes it");
        final long sentBefore = counter("sent_pkts");
        final long receivedBefore = counter("rcvd_pkts");

        final Peer receiver = Peer.start(counter, ReceiverMain.class.getName(), HOST, Integer.toString(PORT));
        try
        {
            assertTrue(receiver.listening.await(TIMEOUT_S, TimeUnit.SECONDS), "the receiver did not listen: " + receiver.lines);
            final Peer sender = Peer.start(counter, SenderMain.class.getName(), HOST, Integer.toString(PORT),
                Integer.toString(ROUNDS));
            try
            {
                assertTrue(sender.process.waitFor(TIMEOUT_S, TimeUnit.SECONDS), "the sender did not finish");
                assertEquals(0, sender.process.exitValue(), "sender exit status; its output: " + sender.lines);
            }
            finally
            {
                sender.process.destroyForcibly();
            }
            assertTrue(receiver.process.waitFor(TIMEOUT_S, TimeUnit.SECONDS), "the receiver did not finish");
            assertEquals(0, receiver.process.exitValue(), "receiver exit status; its output: " + receiver.lines);

            final Map<String, Long> s = Peer.values(sender.line("SENDER DONE"));
            final long bytes = s.get("bytes");
            assertEquals(s.get("warmMaps"), s.get("maps"), "the sender mapped memory in UCX after warm-up");
            assertEquals(s.get("peerWarmMaps"), s.get("peerMaps"), "the receiver mapped memory in UCX after warm-up");
            assertEquals(s.get("warmVerbs"), s.get("verbs"), "the sender registered memory with the device after warm-up");
            assertEquals(s.get("peerWarmVerbs"), s.get("peerVerbs"),
                "the receiver registered memory with the device after warm-up");
            assertTrue(s.get("verbs") >= s.get("maps") && s.get("peerVerbs") >= s.get("peerMaps"),
                "the counter saw fewer ibv_reg_mr than ucp_mem_map calls: it is not counting " + s);

            final long sent = counter("sent_pkts") - sentBefore;
            final long received = counter("rcvd_pkts") - receivedBefore;
            System.out.printf("%s%nrxe0 sent_pkts +%d, rcvd_pkts +%d for %d bytes moved%n",
                sender.line("SENDER DONE"), sent, received, bytes);
            assertTrue(sent >= bytes / MAX_MTU, "rxe0 sent " + sent + " packets for " + bytes + " bytes: not over rxe0");
            assertTrue(received >= bytes / MAX_MTU, "rxe0 received " + received + " packets for " + bytes + " bytes");
        }
        finally
        {
            receiver.process.destroyForcibly();
        }
    }

    private static long counter(final String name) throws IOException
    {
        return Long.parseLong(Files.readString(RXE_COUNTERS.resolve(name)).trim());
    }

    /** A child JVM with the registration counter preloaded and its output collected. */
    private static final class Peer
    {
        final Process process;
        final List<String> lines = new CopyOnWriteArrayList<>();
        final CountDownLatch listening = new CountDownLatch(1);

        private Peer(final Process process)
        {
            this.process = process;
        }

        static Peer start(final String preload, final String mainClass, final String... args) throws IOException
        {
            final String classPath = "target/test-classes:target/classes:" +
                Files.readString(Paths.get("target/softroce-cp.txt")).trim();
            final List<String> command = new java.util.ArrayList<>(List.of(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE, "-cp", classPath, mainClass));
            command.addAll(List.of(args));
            final ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
            builder.environment().put("LD_PRELOAD", preload);
            final Peer peer = new Peer(builder.start());
            final String name = mainClass.substring(mainClass.lastIndexOf('.') + 1);
            final Thread reader = new Thread(() -> peer.read(name), name + "-stdout");
            reader.setDaemon(true);
            reader.start();
            return peer;
        }

        String line(final String prefix)
        {
            return lines.stream().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no '" + prefix + "' line in " + lines));
        }

        static Map<String, Long> values(final String line)
        {
            final Map<String, Long> values = new HashMap<>();
            for (final String field : line.split(" "))
            {
                final int eq = field.indexOf('=');
                if (eq > 0)
                {
                    values.put(field.substring(0, eq), Long.parseLong(field.substring(eq + 1)));
                }
            }
            return values;
        }

        private void read(final String name)
        {
            try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while ((line = in.readLine()) != null)
                {
                    lines.add(line);
                    System.out.println("[" + name + "] " + line);
                    if (line.equals("LISTENING"))
                    {
                        listening.countDown();
                    }
                }
            }
            catch (final IOException ex)
            {
                lines.add("(reading output failed: " + ex + ")");
            }
        }
    }
}
