package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The rows of one CSV file a perf harness wrote: a header line naming the columns, then one row per line, fields
 * separated by commas (no quoting: a field holds a comma only in the one free-text column a {@link CsvLayout} may
 * name). Blank lines, and lines that repeat the header (runs appended to a file), are passed over; a layout also
 * places the header after a preamble, or gives it for a file that has none. A row's fields are read by column name and type; a row
 * with another number of fields than the header, a column the header lacks or a field not of the type asked for
 * throws a {@link CsvFormatException} naming the file, the line and the column.
 */
public final class CsvRows implements Iterable<CsvRows.Row>
{
    private final Path file;
    private final int headerLine;
    private final String header;
    private final Map<String, Integer> columns = new HashMap<>();
    private final int textColumn;
    private final List<Row> rows = new ArrayList<>();

    private CsvRows(final Path file, final int headerLine, final String header, final String textColumn)
    {
        this.file = file;
        this.headerLine = headerLine;
        this.header = header;
        final String[] names = header.split(",", -1);
        for (int i = 0; i < names.length && !header.isEmpty(); i++)
        {
            if (columns.putIfAbsent(names[i], i) != null)
            {
                throw new CsvFormatException(file, headerLine, names[i], "named twice in the header");
            }
        }
        final Integer text = textColumn == null ? Integer.valueOf(-1) : columns.get(textColumn);
        if (text == null)
        {
            throw new CsvFormatException(file, headerLine, textColumn, "not in the header (" + header + ")");
        }
        this.textColumn = text;
    }

    /**
     * @param file the CSV, a header line then its rows; a missing file has no rows.
     * @return its rows, in file order.
     * @throws IOException         if the file cannot be read.
     * @throws CsvFormatException  for a row whose number of fields is not the header's, or a header that names a
     *                             column twice.
     */
    public static CsvRows read(final Path file) throws IOException
    {
        return read(file, CsvLayout.headerFirst());
    }

    /**
     * @param file   the CSV; a missing file has no rows.
     * @param layout where its header is, and which column may hold commas.
     * @return its rows, in file order.
     * @throws IOException         if the file cannot be read.
     * @throws CsvFormatException  for a row whose number of fields is not the header's (more are the text column's
     *                             when the layout names one), a header that names a column twice, or a file with
     *                             a preamble but not the header the layout expects after it.
     */
    public static CsvRows read(final Path file, final CsvLayout layout) throws IOException
    {
        if (!Files.isRegularFile(file))
        {
            return new CsvRows(file, 0, "", null);
        }
        CsvRows csv = layout.headerInFile() ? null : new CsvRows(file, 0, layout.header(), layout.textColumn());
        int n = 0;
        int preamble = 0;
        for (final String line : Files.readAllLines(file))
        {
            n++;
            if (csv == null && layout.header() != null && !line.equals(layout.header()))
            {
                preamble = n;                    // a line of the writer's own before the header
                continue;
            }
            if (line.isBlank() || (csv != null && line.equals(csv.header)))
            {
                continue;
            }
            if (csv == null)
            {
                csv = new CsvRows(file, n, line, layout.textColumn());
            }
            else
            {
                csv.rows.add(csv.new Row(n, csv.fields(n, line)));
            }
        }
        if (csv == null && preamble > 0)
        {
            throw new CsvFormatException(file, preamble, null, "no header line '" + layout.header() + "' after " +
                preamble + " line(s) of preamble");
        }
        return csv != null ? csv : new CsvRows(file, 0, "", null);
    }

    private String[] fields(final int line, final String text)
    {
        final String[] fields = text.split(",", -1);
        final int extra = fields.length - columns.size();
        if (extra == 0)
        {
            return fields;
        }
        if (extra > 0 && textColumn >= 0)             // the text column's own commas
        {
            final String[] joined = new String[columns.size()];
            System.arraycopy(fields, 0, joined, 0, textColumn);
            joined[textColumn] = String.join(",", List.of(fields).subList(textColumn, textColumn + extra + 1));
            System.arraycopy(fields, textColumn + extra + 1, joined, textColumn + 1, columns.size() - textColumn - 1);
            return joined;
        }
        throw new CsvFormatException(file, line, null, "expected " + columns.size() + " fields, got " +
            fields.length + " (header: " + header + "): " + text);
    }

    /**
     * @return the file read.
     */
    public Path file()
    {
        return file;
    }

    /**
     * @return the rows, in file order.
     */
    public List<Row> rows()
    {
        return Collections.unmodifiableList(rows);
    }

    @Override
    public Iterator<Row> iterator()
    {
        return rows().iterator();
    }

    /**
     * One row: its fields by column name.
     */
    public final class Row
    {
        private final int line;
        private final String[] fields;

        private Row(final int line, final String[] fields)
        {
            this.line = line;
            this.fields = fields;
        }

        /**
         * @return its line in the file, from 1.
         */
        public int line()
        {
            return line;
        }

        /**
         * @param column a column the header names.
         * @return the field as written.
         * @throws CsvFormatException if the header does not name the column.
         */
        public String text(final String column)
        {
            final Integer i = columns.get(column);
            if (i == null)
            {
                throw new CsvFormatException(file, headerLine, column, "not in the header (" + header + ")");
            }
            return fields[i];
        }

        /**
         * @param column a column of integers.
         * @return the field as an int.
         * @throws CsvFormatException if the column is missing or the field is not an int.
         */
        public int intValue(final String column)
        {
            return parsed(column, "not an integer", Integer::parseInt);
        }

        /**
         * @param column a column of integers.
         * @return the field as a long.
         * @throws CsvFormatException if the column is missing or the field is not a long.
         */
        public long longValue(final String column)
        {
            return parsed(column, "not an integer", Long::parseLong);
        }

        /**
         * @param column a column of numbers.
         * @return the field as a double.
         * @throws CsvFormatException if the column is missing or the field is not a number.
         */
        public double doubleValue(final String column)
        {
            return parsed(column, "not a number", Double::parseDouble);
        }

        /**
         * @param column a column of numbers where a field may be empty (not measured).
         * @return the field as a double, NaN if empty.
         * @throws CsvFormatException if the column is missing or the field is neither empty nor a number.
         */
        public double doubleOrNaN(final String column)
        {
            return text(column).isEmpty() ? Double.NaN : doubleValue(column);
        }

        /**
         * @param column  the column at fault.
         * @param problem what is wrong with its field in this row.
         * @return the exception naming the file, this row's line and the column, for a reader's own checks.
         */
        public CsvFormatException error(final String column, final String problem)
        {
            return new CsvFormatException(file, line, column, problem);
        }

        private <T> T parsed(final String column, final String problem, final Function<String, T> parse)
        {
            final String s = text(column);
            try
            {
                return parse.apply(s);
            }
            catch (final NumberFormatException e)
            {
                throw error(column, problem + ": '" + s + "'");
            }
        }
    }
}
