package dev.pinarena.perf.report;

import dev.pinarena.registration.os.HugePagePools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The machine a report was measured on, as read from /proc and the JVM.
 */
public final class Machine
{
    private Machine()
    {
    }

    /**
     * @return one Markdown bullet per fact.
     */
    public static List<String> describe()
    {
        final List<String> lines = new ArrayList<>();
        lines.add("CPU: " + cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cores visible to the JVM");
        lines.add("Memory: " + meminfo("MemTotal") + "; 2 MiB hugepages reserved " + meminfo("HugePages_Total") +
            ", free " + meminfo("HugePages_Free"));
        lines.add("Transparent huge pages: " + HugePagePools.transparentHugePageMode() +
            " (the system's mode when the report was written; the shim's figures depend on it, and Debian's and " +
            "RHEL's kernels ship \"always\")");
        lines.add("Kernel: " + System.getProperty("os.name") + " " + System.getProperty("os.version") +
            " (" + System.getProperty("os.arch") + ")");
        lines.add("JVM: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        return lines;
    }

    private static String cpuModel()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/cpuinfo")))
            {
                if (line.startsWith("model name"))
                {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        }
        catch (final IOException ex)
        {
            return "unknown (" + ex.getMessage() + ")";
        }
        return "unknown";
    }

    private static String meminfo(final String key)
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/meminfo")))
            {
                if (line.startsWith(key + ":"))
                {
                    return line.substring(key.length() + 1).trim();
                }
            }
        }
        catch (final IOException ex)
        {
            return "?";
        }
        return "?";
    }
}
