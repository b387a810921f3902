package dev.pinarena.registration.cache;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.registration.testkit.NativeBuild;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java feed with the malloc shim {@code libpinarena.so} preloaded (it carries the memory hooks): a
 * child JVM ({@link ShimPreloadChild}) finds the library through LD_PRELOAD, and a JDK munmap invalidates
 * its cached io_uring registration, checked by the bytes WRITE_FIXED sends. The shim comes from bindings-c's
 * build ({@link NativeBuild}); no step skips.
 */
class ShimPreloadFeedTest
{
    @Test
    void locateFindsTheShimAndTheHooksLibraryButNotOtherHelpers()
    {
        assertEquals("/x/libpinarena.so", NativeInvalidationFeed.locate("/x/libpinarena.so", null));
        assertEquals("/x/libpinarena-hooks.so", NativeInvalidationFeed.locate("/x/libpinarena-hooks.so", null));
        assertEquals("/y/libpinarena.so",
            NativeInvalidationFeed.locate("/x/libpinarena-verbs-loopback.so:/y/libpinarena.so", null));
        assertEquals("/x/libpinarena.so", NativeInvalidationFeed.locate("libfoo.so /x/libpinarena.so", null));
        assertEquals("fallback", NativeInvalidationFeed.locate("/x/libother.so", "fallback"));
        assertNull(NativeInvalidationFeed.locate(null, null));
    }

    @Test
    void childJvmWithShimPreloadedSeesTheJdkUnmap() throws Exception
    {
        final File so = new File(NativeBuild.file("libpinarena.so"));

        final String classpath = System.getProperty("surefire.test.class.path");
        assertNotNull(classpath, "surefire.test.class.path (the child's classpath)");
        final String java = System.getProperty("java.home") + "/bin/java";
        final ProcessBuilder pb = new ProcessBuilder(
            java, AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE, "-cp", classpath,
            ShimPreloadChild.class.getName())
            .redirectErrorStream(true);
        pb.environment().put("LD_PRELOAD", so.getPath());
        pb.environment().remove("PINARENA_UFFD");
        final Process child = pb.start();
        final String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(5, TimeUnit.MINUTES), "child JVM hung");   /* a guard, not a timing */
        System.out.print(out);
        assertEquals(0, child.exitValue(), "child JVM failed:\n" + out);
        assertTrue(out.contains("OK source=hooks (LD_PRELOAD)"), out);
    }
}
