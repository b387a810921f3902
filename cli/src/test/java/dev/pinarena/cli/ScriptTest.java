package dev.pinarena.cli;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code ./pinarena} script as a user on a machine with nothing but Java runs it: its PATH holds the JDK,
 * a stand-in for Maven (the classes are built by this build already) and the few shell tools the script
 * uses; apt-get, dpkg-query, sudo, gcc and make are traps that log their call and fail.
 */
class ScriptTest
{
    /** Shell tools the script itself uses; nothing that installs or compiles. */
    private static final List<String> SHELL_TOOLS =
        List.of("bash", "env", "dirname", "cat", "id", "find", "touch", "mkdir", "sort");
    private static final List<String> TRAPS = List.of("apt-get", "dpkg-query", "dpkg", "sudo", "gcc", "cc", "make");

    @TempDir
    Path bin;
    private Path log;
    private Path script;

    @BeforeEach
    void onlyJava() throws IOException
    {
        script = Path.of(System.getProperty("pinarena.root"), "pinarena").toRealPath();
        log = bin.resolve("calls.log");
        for (final String tool : SHELL_TOOLS)
        {
            Files.copy(which(tool), bin.resolve(tool), StandardCopyOption.COPY_ATTRIBUTES);
        }
        final Path jdk = Path.of(System.getProperty("java.home"), "bin");
        forward("java", jdk.resolve("java"));
        forward("javac", jdk.resolve("javac"));
        stub("mvn", 0);
        for (final String trap : TRAPS)
        {
            stub(trap, 1);
        }
    }

    @Test
    void doctorRunsWithOnlyJavaAndMavenAndInstallsNothing() throws Exception
    {
        final Result result = run("doctor");
        assertEquals(0, result.status, result.output);
        assertTrue(result.output.contains("] io_uring"), result.output);
        assertTrue(result.output.contains("] auto picks"), result.output);
        final String calls = calls();
        for (final String trap : TRAPS)
        {
            assertFalse(calls.contains(trap + " "), trap + " was called:\n" + calls);
        }
    }

    @Test
    void doctorWithoutMavenAsksForMavenAlone() throws Exception
    {
        Files.delete(bin.resolve("mvn"));
        final Result result = run("doctor");
        assertNotEquals(0, result.status, result.output);
        final String asked = result.output + calls();
        assertTrue(asked.contains("maven"), asked);
        for (final String notNeeded : new String[] {"qemu", "gcc", "openmpi", "openjdk"})
        {
            assertFalse(asked.contains(notNeeded), notNeeded + " asked for:\n" + asked);
        }
    }

    @Test
    void theScriptAndTheJavaPartPrintOneUsageText() throws Exception
    {
        final Result result = run("help");
        assertEquals(0, result.status, result.output);
        assertEquals(Main.usage(), result.output);
        for (final String command : new String[] {"doctor", "demo", "test", "bench", "help"})
        {
            assertTrue(result.output.contains("\n  " + command + " "), command + " missing from\n" + result.output);
        }
    }

    private record Result(int status, String output)
    {
    }

    private Result run(final String... args) throws Exception
    {
        final ProcessBuilder builder = new ProcessBuilder();
        builder.command().add(bin.resolve("bash").toString());
        builder.command().add(script.toString());
        builder.command().addAll(List.of(args));
        builder.environment().clear();
        builder.environment().put("PATH", bin.toString());
        builder.environment().put("HOME", System.getProperty("user.home"));
        builder.redirectErrorStream(true);
        final Process process = builder.start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(5, TimeUnit.MINUTES), "the script hung");   /* a guard, not a timing */
        return new Result(process.exitValue(), output);
    }

    private String calls() throws IOException
    {
        return Files.exists(log) ? Files.readString(log) : "";
    }

    private void forward(final String name, final Path to) throws IOException
    {
        script(name, "exec '" + to + "' \"$@\"\n");
    }

    private void stub(final String name, final int status) throws IOException
    {
        script(name, "echo \"" + name + " $*\" >> '" + log + "'\nexit " + status + "\n");
    }

    private void script(final String name, final String body) throws IOException
    {
        final Path file = bin.resolve(name);
        Files.writeString(file, "#!" + bin.resolve("bash") + "\n" + body);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static Path which(final String tool) throws IOException
    {
        for (final String dir : System.getenv("PATH").split(File.pathSeparator))
        {
            final Path candidate = Path.of(dir, tool);
            if (Files.isExecutable(candidate))
            {
                return candidate.toRealPath();
            }
        }
        throw new IOException(tool + " is not on this machine's PATH");
    }
}
