package dev.pinarena.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CommandLineTest
{
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(final String... args)
    {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String output()
    {
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void demoReproducesTheHazardWithGlibcAndNotWithPinarena()
    {
        final int status = run("demo");
        final String text = output();
        assertEquals(0, status, text);
        assertTrue(text.contains("(a) glibc malloc + address-keyed cache: STALE bytes sent (the hazard, reproduced)"), text);
        assertTrue(text.contains("wire carried: \"OLD bytes from the first malloc, freed since\""), text);
        assertTrue(text.contains("(b) pinarena memory:                     new bytes sent, same physical frames"), text);
        assertTrue(text.contains("wire carried: \"NEW bytes written after the second allocation\""), text);
        assertTrue(text.contains("(b) native malloc through the shim:      new bytes sent, same physical frames " +
            "(glibc alone: stale, as in (a))"), text);
        assertTrue(text.contains("stale-registration demo with pinarena (LD_PRELOAD=libpinarena.so)"), text);
    }

    @Test
    void doctorReportsEveryCheckAndWhatAutoPicks()
    {
        final int status = run("doctor");
        final String text = output();
        assertEquals(0, status, text);
        for (final String check : new String[] {"rdma devices", "RLIMIT_MEMLOCK", "hugepages 2MiB", "THP", "io_uring",
            "pagemap", "arena cap", "auto picks"})
        {
            assertTrue(text.contains("] " + check), "missing " + check + " in\n" + text);
        }
        assertTrue(text.contains("[ok  ] io_uring"), text);
        // On a host without RDMA the verbs line must say why, naming the call.
        assertTrue(text.contains("[ok  ] rdma devices") || text.contains("ibv_get_device_list"), text);
    }

    @Test
    void unknownCommandsAreRefusedWithUsage()
    {
        assertEquals(2, run("frobnicate"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown command 'frobnicate'"));
        assertEquals(2, run());
    }
}
