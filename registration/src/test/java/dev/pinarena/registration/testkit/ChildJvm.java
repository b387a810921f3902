package dev.pinarena.registration.testkit;

import dev.pinarena.registration.AgronaAccess;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A test's child JVM: a main class of the test class path run in a JVM of its own (behind a launcher such as
 * {@code prlimit} or {@code setpriv}, with JVM options of its own), its output read as {@code key=value}
 * lines. A failed, silent or slow child is an {@link AssertionError} that quotes what it printed.
 */
public final class ChildJvm
{
    private static final long TIMEOUT_SECONDS = 300;

    private final String output;
    private final Map<String, String> values = new HashMap<>();

    private ChildJvm(final String output)
    {
        this.output = output;
        for (final String line : output.split("\n"))
        {
            final int eq = line.indexOf('=');
            if (eq > 0)
            {
                values.put(line.substring(0, eq), line.substring(eq + 1).trim());
            }
        }
    }

    /**
     * Runs {@code main} and waits for it to exit with status 0.
     *
     * @param launcher   the command (and its arguments) the JVM runs under, or an empty list.
     * @param jvmOptions options of the child JVM beside the class path and the exports flag.
     * @param main       a class with a {@code main} method on this JVM's test class path.
     * @param args       its arguments.
     * @return what it printed.
     */
    public static ChildJvm run(
        final List<String> launcher, final List<String> jvmOptions, final Class<?> main, final String... args)
        throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(launcher);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add(AgronaAccess.EXPORTS_OPTION);
        command.add(AgronaAccess.EXPORTS_VALUE);
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(classPath(main));
        command.add(main.getName());
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output;
        try
        {
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS))
            {
                throw new AssertionError(main.getSimpleName() + " did not finish in " + TIMEOUT_SECONDS + " s:\n" + output);
            }
        }
        finally
        {
            process.destroyForcibly();
        }
        if (process.exitValue() != 0)
        {
            throw new AssertionError(main.getSimpleName() + " exited with " + process.exitValue() + ":\n" + output);
        }
        return new ChildJvm(output);
    }

    /**
     * @param key a key the child printed as {@code key=value}.
     * @return its value.
     * @throws AssertionError if the child did not print it.
     */
    public String get(final String key)
    {
        final String value = values.get(key);
        if (value == null)
        {
            throw new AssertionError("the child printed no " + key + "=:\n" + output);
        }
        return value;
    }

    /** @return everything the child printed. */
    public String output()
    {
        return output;
    }

    public String toString()
    {
        return output;
    }

    /**
     * The class path of this JVM as the child needs it: the launcher may load tests through its own class
     * loader (the JUnit console launcher's --class-path, as in the guest), so java.class.path alone is not
     * enough.
     */
    private static String classPath(final Class<?> main) throws IOException
    {
        final Set<String> entries = new LinkedHashSet<>();
        for (ClassLoader loader = main.getClassLoader(); loader != null; loader = loader.getParent())
        {
            if (loader instanceof URLClassLoader)
            {
                for (final URL url : ((URLClassLoader)loader).getURLs())
                {
                    if ("file".equals(url.getProtocol()))
                    {
                        try
                        {
                            entries.add(new File(url.toURI()).getCanonicalPath());
                        }
                        catch (final URISyntaxException ex)
                        {
                            throw new IOException("class path entry " + url, ex);
                        }
                    }
                }
            }
        }
        for (final String key : new String[] {"surefire.test.class.path", "java.class.path"})
        {
            final String value = System.getProperty(key);
            if (value != null && !value.isEmpty())
            {
                entries.addAll(List.of(value.split(File.pathSeparator)));
            }
        }
        return String.join(File.pathSeparator, entries);
    }
}
