package dev.pinarena.perf.report;

import java.nio.file.Path;

/**
 * A CSV file a perf harness wrote is not what its reader expects: a row with the wrong number of fields, a column
 * the header does not name, a field that is not of its column's type. The message starts with
 * {@code file:line:} and names the column when one is at fault.
 */
public final class CsvFormatException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final int line;
    private final String column;

    /**
     * @param file    the file.
     * @param line    the line at fault, from 1.
     * @param column  the column at fault, or null when the row as a whole is.
     * @param problem what is wrong, for the message.
     */
    public CsvFormatException(final Path file, final int line, final String column, final String problem)
    {
        super(file + ":" + line + ": " + (column == null ? "" : "column '" + column + "': ") + problem);
        this.file = file;
        this.line = line;
        this.column = column;
    }

    /**
     * @return the file.
     */
    public Path file()
    {
        return file;
    }

    /**
     * @return the line at fault, from 1.
     */
    public int line()
    {
        return line;
    }

    /**
     * @return the column at fault, or null when the row as a whole is.
     */
    public String column()
    {
        return column;
    }
}
