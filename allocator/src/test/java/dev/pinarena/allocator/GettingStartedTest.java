package dev.pinarena.allocator;

import dev.pinarena.registration.AgronaAccess;
import org.junit.jupiter.api.Test;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a new user meets first: the Java guide's (docs/java.md) producer/consumer example compiles and runs as printed, and a
 * JVM started without the Agrona flag gets an error that names the flag.
 */
class GettingStartedTest
{
    /** The Java guide the README links to (docs/java.md) carries the first example. */
    private static final Path README = Path.of("..", "docs", "java.md");
    /** The example is the java block right after this marker. */
    private static final String MARKER = "<!-- example: ProducerConsumer.java -->";

    @Test
    void theReadmeProducerConsumerExampleCompilesAndRuns(@org.junit.jupiter.api.io.TempDir final Path dir) throws Exception
    {
        final String readme = Files.readString(README);
        final int at = readme.indexOf(MARKER);
        assertTrue(at >= 0, README + " has the marked example");
        final Matcher block = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(readme.substring(at));
        assertTrue(block.find(), "a java block follows the marker");
        final String source = block.group(1);
        final long lines = source.lines().count();
        assertTrue(lines <= 45, "the example stays short: " + lines + " lines");

        final Path file = dir.resolve("ProducerConsumer.java");
        Files.writeString(file, source);
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        final ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        final int status = javac.run(null, diagnostics, diagnostics,
            "-cp", System.getProperty("java.class.path"), "-d", dir.toString(), file.toString());
        assertEquals(0, status, "javac: " + diagnostics.toString(StandardCharsets.UTF_8));

        final PrintStream out = System.out;
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(new URL[]{dir.toUri().toURL()}, getClass().getClassLoader()))
        {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            loader.loadClass("ProducerConsumer").getMethod("main", String[].class).invoke(null, (Object)new String[0]);
        }
        finally
        {
            System.setOut(out);
        }
        final String output = printed.toString(StandardCharsets.UTF_8);
        assertTrue(output.contains("consumer checked 1000 messages"), output);
    }

    @Test
    void aJvmWithoutTheFlagIsToldWhichFlagToAdd() throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(OpenWithoutFlag.class.getName());
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        assertTrue(output.contains("MissingExportsException"), output);
        assertTrue(output.contains(AgronaAccess.FLAG), output);
    }

    /** Run in a child JVM started without the flag. */
    static final class OpenWithoutFlag
    {
        public static void main(final String[] args)
        {
            try (var registrar = TestArenas.registrar())
            {
                PinnedArena.open(registrar).close();
            }
        }
    }
}
