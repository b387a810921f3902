package dev.pinarena.registration.uring;

import dev.pinarena.registration.AgronaAccess;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Registers until RLIMIT_MEMLOCK refuses, in a child JVM that has dropped CAP_IPC_LOCK (root would bypass
 * the limit) and runs under an 8 MiB limit: the error must be clear and nothing may stay pinned.
 */
class MemlockExhaustionTest
{
    static final long LIMIT = 8L << 20;

    @Test
    void registeringPastTheLimitFailsClearlyAndLeaksNothing() throws IOException, InterruptedException
    {
        final Map<String, String> child = runChild(MemlockExhaustionChild.class.getName());

        assertEquals("false", child.get("cap_ipc_lock"), "the child must not hold CAP_IPC_LOCK: " + child);
        assertEquals(Long.toString(LIMIT), child.get("limit"));
        final long refusedAfter = Long.parseLong(child.get("refused_after"));
        assertTrue(refusedAfter > 0 && refusedAfter <= LIMIT, "refused after " + refusedAfter + " bytes");
        assertEquals("12", child.get("errno"), "ENOMEM");
        final String message = child.get("message");
        assertTrue(message.startsWith("io_uring_register(IORING_REGISTER_BUFFERS_UPDATE)"), message);
        assertTrue(message.contains("ENOMEM"), message);
        assertTrue(message.contains("raise ulimit -l or grant CAP_IPC_LOCK"), message);
        assertEquals(Long.toString(refusedAfter), child.get("vmpin_at_failure"), "the kernel's count agrees");
        assertEquals("0", child.get("vmpin_after"), "nothing left pinned");
        assertEquals("0", child.get("pinned_after"));
        assertEquals("true", child.get("done"));
    }

    /**
     * Runs {@code mainClass} in a JVM without CAP_IPC_LOCK and with RLIMIT_MEMLOCK at {@link #LIMIT}.
     *
     * @return its {@code key=value} output lines.
     */
    static Map<String, String> runChild(final String mainClass) throws IOException, InterruptedException
    {
        final String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process process = new ProcessBuilder(List.of(
            "prlimit", "--memlock=" + LIMIT + ":" + LIMIT,
            "setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock",
            java, AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE, "-cp", classPath, mainClass))
            .redirectErrorStream(true)
            .start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "child timed out");
        assertEquals(0, process.exitValue(), "child failed:\n" + output);
        final Map<String, String> values = new HashMap<>();
        for (final String line : output.split("\n"))
        {
            final int eq = line.indexOf('=');
            if (eq > 0)
            {
                values.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return values;
    }
}
