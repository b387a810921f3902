package dev.pinarena.cli;

import java.io.PrintStream;
import java.util.Arrays;

/**
 * Entry point of the {@code ./pinarena} command.
 */
public final class Main
{
    private static final String USAGE = String.join("\n",
        "usage: pinarena <command>",
        "  doctor   what this machine offers for pinning (RDMA devices, RLIMIT_MEMLOCK, hugepages, THP, io_uring)",
        "           and what the auto registrar picks, each line with a fix where something is off",
        "  demo     the stale-registration hazard, end to end with a real kernel pin (io_uring):",
        "           (a) glibc malloc + an address-keyed registration cache sends stale bytes after free/malloc;",
        "           (b) the same steps on pinarena memory send the right bytes. Exits 1 if (b) ever sends stale data.",
        "  test     install prerequisites, reserve hugepages, then run every test (mvn -B verify)");

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
            err.println(USAGE);
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
                out.println(USAGE);
                return 0;
            default:
                err.println("pinarena: unknown command '" + args[0] + "'");
                err.println(USAGE);
                return 2;
        }
    }
}
