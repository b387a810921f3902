package dev.pinarena.allocator;

import java.util.ArrayList;
import java.util.List;

/**
 * One operation of a generated sequence, and the compact text both drivers read (the Java arena's
 * {@link ArenaModelDriver} and the C shim's {@code bindings-c/tests/model/replay.c}). A sequence is one line of
 * space-separated tokens; {@code id} names a slot (0..{@link RuleModel#SLOTS}-1), not an address:
 * <pre>
 * a3:4096        allocate 4096 bytes into slot 3      a3:100@512  ... aligned to 512
 * a3:100r        ... a remote buffer                  a3:100h     ... allocated on the helper thread
 * f3             free on the main thread              x3          free on the helper thread
 * k3             look the block up: keys and frames   d3          free slot 3 again: a double free
 * z3:9000        realloc (C)                          m3 / p3     madvise DONTNEED / mprotect PROT_READ (C)
 * t              trim                                 F           fork; the child checks every live block (C)
 * </pre>
 *
 * @param kind  the token's letter.
 * @param id    the slot, or -1 for {@code t} and {@code F}.
 * @param size  bytes for {@code a} and {@code z}, else 0.
 * @param align alignment for {@code a}, 0 for the default.
 * @param remote a remote buffer ({@code a} only).
 * @param helper allocated on the helper thread ({@code a} only).
 */
record ModelOp(char kind, int id, long size, int align, boolean remote, boolean helper)
{
    /** Kinds only the C shim has (realloc, fork, madvise, mprotect): the Java driver refuses them. */
    static final String C_ONLY = "zFmp";

    static ModelOp parse(final String token)
    {
        if (token.isEmpty())
        {
            throw new IllegalArgumentException("empty operation token");
        }
        final char kind = token.charAt(0);
        switch (kind)
        {
            case 't', 'F' ->
            {
                if (token.length() != 1)
                {
                    throw new IllegalArgumentException("'" + token + "': " + kind + " takes no slot");
                }
                return new ModelOp(kind, -1, 0, 0, false, false);
            }
            case 'a', 'z' ->
            {
                final int colon = token.indexOf(':');
                if (colon < 0)
                {
                    throw new IllegalArgumentException("'" + token + "': expected " + kind + "<slot>:<size>");
                }
                final int id = slot(token, token.substring(1, colon));
                int end = colon + 1;
                while (end < token.length() && Character.isDigit(token.charAt(end)))
                {
                    end++;
                }
                final long size = number(token, token.substring(colon + 1, end));
                int align = 0;
                boolean remote = false;
                boolean helper = false;
                String rest = token.substring(end);
                if (kind == 'a' && rest.startsWith("@"))
                {
                    int alignEnd = 1;
                    while (alignEnd < rest.length() && Character.isDigit(rest.charAt(alignEnd)))
                    {
                        alignEnd++;
                    }
                    align = (int)number(token, rest.substring(1, alignEnd));
                    if (Integer.bitCount(align) != 1)
                    {
                        throw new IllegalArgumentException("'" + token + "': alignment must be a power of two");
                    }
                    rest = rest.substring(alignEnd);
                }
                for (final char flag : rest.toCharArray())
                {
                    if (kind == 'a' && flag == 'r')
                    {
                        remote = true;
                    }
                    else if (kind == 'a' && flag == 'h')
                    {
                        helper = true;
                    }
                    else
                    {
                        throw new IllegalArgumentException("'" + token + "': unknown flag '" + flag + "'");
                    }
                }
                if (size <= 0)
                {
                    throw new IllegalArgumentException("'" + token + "': size must be positive");
                }
                return new ModelOp(kind, id, size, align, remote, helper);
            }
            case 'f', 'x', 'k', 'd', 'm', 'p' ->
            {
                return new ModelOp(kind, slot(token, token.substring(1)), 0, 0, false, false);
            }
            default -> throw new IllegalArgumentException("'" + token + "': unknown operation '" + kind + "'");
        }
    }

    static List<ModelOp> parseLine(final String line)
    {
        final List<ModelOp> ops = new ArrayList<>();
        for (final String token : line.trim().split("\\s+"))
        {
            if (!token.isEmpty())
            {
                ops.add(parse(token));
            }
        }
        return ops;
    }

    static String format(final List<ModelOp> ops)
    {
        final StringBuilder line = new StringBuilder();
        for (final ModelOp op : ops)
        {
            if (line.length() > 0)
            {
                line.append(' ');
            }
            line.append(op);
        }
        return line.toString();
    }

    boolean cOnly()
    {
        return C_ONLY.indexOf(kind) >= 0;
    }

    ModelOp withSize(final long newSize)
    {
        return new ModelOp(kind, id, newSize, align, remote, helper);
    }

    @Override
    public String toString()
    {
        if (id < 0)
        {
            return String.valueOf(kind);
        }
        if (kind != 'a' && kind != 'z')
        {
            return kind + Integer.toString(id);
        }
        return kind + Integer.toString(id) + ':' + size + (align != 0 ? "@" + align : "") +
            (remote ? "r" : "") + (helper ? "h" : "");
    }

    private static int slot(final String token, final String digits)
    {
        final long id = number(token, digits);
        if (id >= RuleModel.SLOTS)
        {
            throw new IllegalArgumentException("'" + token + "': slot above " + (RuleModel.SLOTS - 1));
        }
        return (int)id;
    }

    private static long number(final String token, final String digits)
    {
        if (digits.isEmpty())
        {
            throw new IllegalArgumentException("'" + token + "': a number is missing");
        }
        try
        {
            return Long.parseLong(digits);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("'" + token + "': '" + digits + "' is not a number", ex);
        }
    }
}
