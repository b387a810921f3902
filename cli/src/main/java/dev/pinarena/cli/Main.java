package dev.pinarena.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The Java part of the {@code ./pinarena} command: doctor and demo. The script builds it, runs it, and handles
 * test and bench itself; both print the one usage text ({@code usage.txt}).
 */
public final class Main
{
    /** The one usage text, shared with the {@code ./pinarena} script (which owns test, bench and help). */
    private static final String USAGE_RESOURCE = "usage.txt";

    private Main()
    {
    }

    /**
     * @param args a command and its arguments.
     */
    public static void main(final String[] args)
    {
        System.exit(run(args, System.out, System.err));
    }

    static int run(final String[] args, final PrintStream out, final PrintStream err)
    {
        if (args.length == 0)
        {
            err.print(usage());
            return 2;
        }
        final String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0])
        {
            case "doctor":
                return Doctor.run(out);
            case "demo":
                return StaleRegistrationDemo.run(rest, out);
            case "help":
            case "--help":
            case "-h":
                out.print(usage());
                return 0;
            default:
                err.println("pinarena: unknown command '" + args[0] + "'" + (isScriptCommand(args[0]) ?
                    " here: the ./pinarena script runs it" : ""));
                err.print(usage());
                return 2;
        }
    }

    /** @return the usage text of {@code ./pinarena}, from the resource the script prints too. */
    static String usage()
    {
        try (InputStream in = Main.class.getResourceAsStream(USAGE_RESOURCE))
        {
            if (in == null)
            {
                throw new IllegalStateException(USAGE_RESOURCE + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static boolean isScriptCommand(final String command)
    {
        return "test".equals(command) || "bench".equals(command);
    }
}
