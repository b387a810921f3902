package dev.pinarena.registration.uring;

import dev.pinarena.registration.testkit.ChildJvm;
import dev.pinarena.registration.testkit.MemlockChild;
import org.junit.jupiter.api.Test;

import java.io.IOException;

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
        final ChildJvm child = MemlockChild.run(MemlockChild.Kind.URING, LIMIT, 1L << 20);

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
}
