package dev.pinarena.perf.report;

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
    static final Path THP_ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

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
        lines.add("Transparent huge pages: " + thpMode(THP_ENABLED) + " (the system's mode when the report was " +
            "written; the shim's figures depend on it, and Debian's and RHEL's kernels ship \"always\")");
        lines.add("Kernel: " + System.getProperty("os.name") + " " + System.getProperty("os.version") +
            " (" + System.getProperty("os.arch") + ")");
        lines.add("JVM: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        return lines;
    }

    /**
     * @param enabled the kernel's THP mode file, e.g. "always [madvise] never".
     * @return the bracketed mode, "none (no THP in this kernel)" when the file is absent, or "unknown (...)".
     */
    static String thpMode(final Path enabled)
    {
        final String line;
        try
        {
            line = Files.readString(enabled).trim();
        }
        catch (final java.nio.file.NoSuchFileException ex)
        {
            return "none (no THP in this kernel)";
        }
        catch (final IOException ex)
        {
            return "unknown (" + ex.getMessage() + ")";
        }
        final int open = line.indexOf('[');
        final int close = line.indexOf(']', open + 1);
        return open >= 0 && close > open ? line.substring(open + 1, close) : "unknown (" + line + ")";
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
