package dev.pinarena.perf.report;

/**
 * Where a CSV file's header is and which column's text may hold commas, for {@link CsvRows#read(java.nio.file.Path,
 * CsvLayout)}. The plain layout, {@link #headerFirst()}, is a header line then the rows. The others serve files a
 * harness writes otherwise:
 * <ul>
 * <li>{@link #afterPreamble(String)}: a tool prints lines of its own before the header (the verbs cost curve starts
 * with {@code device rxe0, GID index 1, ...}); every line before the expected header is passed over, and a file that
 * has lines but not that header is refused.</li>
 * <li>{@link #headerless(String)}: the file has no header (several writers append to it); the reader names its
 * columns.</li>
 * <li>{@link #commasIn(String)}: one column holds free text that may contain commas (a step's description); a row
 * with more fields than the header gives that column the extra ones, commas and all. A row with fewer is still
 * refused.</li>
 * </ul>
 */
public final class CsvLayout
{
    private static final CsvLayout HEADER_FIRST = new CsvLayout(null, false, null);

    private final String header;
    private final boolean headerInFile;
    private final String textColumn;

    private CsvLayout(final String header, final boolean headerInFile, final String textColumn)
    {
        this.header = header;
        this.headerInFile = headerInFile;
        this.textColumn = textColumn;
    }

    /**
     * @return the file's first line that is not blank is its header.
     */
    public static CsvLayout headerFirst()
    {
        return HEADER_FIRST;
    }

    /**
     * @param header the header line, exactly as the writer prints it.
     * @return lines before that header are a preamble, passed over.
     */
    public static CsvLayout afterPreamble(final String header)
    {
        return new CsvLayout(header, true, null);
    }

    /**
     * @param header the columns, comma-separated, as a header line would name them.
     * @return every line that is not blank is a row of those columns.
     */
    public static CsvLayout headerless(final String header)
    {
        return new CsvLayout(header, false, null);
    }

    /**
     * @param column the one column whose text may hold commas.
     * @return this layout, with that column taking a row's extra fields.
     */
    public CsvLayout commasIn(final String column)
    {
        return new CsvLayout(header, headerInFile, column);
    }

    /**
     * @return the header the reader expects or gives, or null when the file's first line is it.
     */
    String header()
    {
        return header;
    }

    /**
     * @return whether the file holds the header (after a preamble, or as its first line).
     */
    boolean headerInFile()
    {
        return header == null || headerInFile;
    }

    /**
     * @return the column that may hold commas, or null.
     */
    String textColumn()
    {
        return textColumn;
    }
}
