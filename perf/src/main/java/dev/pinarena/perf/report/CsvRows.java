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
 * separated by commas (no quoting: no harness writes a comma inside a field). Blank lines, and lines that repeat
 * the header (runs appended to a file), are passed over. A row's fields are read by column name and type; a row
 * with another number of fields than the header, a column the header lacks or a field not of the type asked for
 * throws a {@link CsvFormatException} naming the file, the line and the column.
 */
public final class CsvRows implements Iterable<CsvRows.Row>
{
    private final Path file;
    private final int headerLine;
    private final String header;
    private final Map<String, Integer> columns = new HashMap<>();
    private final List<Row> rows = new ArrayList<>();

    private CsvRows(final Path file, final int headerLine, final String header)
    {
        this.file = file;
        this.headerLine = headerLine;
        this.header = header;
    }

    /**
     * @param file the CSV; a missing file has no rows.
     * @return its rows, in file order.
     * @throws IOException         if the file cannot be read.
     * @throws CsvFormatException  for a row whose number of fields is not the header's, or a header that names a
     *                             column twice.
     */
    public static CsvRows read(final Path file) throws IOException
    {
        if (!Files.isRegularFile(file))
        {
            return new CsvRows(file, 0, "");
        }
        CsvRows csv = null;
        int n = 0;
        for (final String line : Files.readAllLines(file))
        {
            n++;
            if (line.isBlank() || (csv != null && line.equals(csv.header)))
            {
                continue;
            }
            final String[] fields = line.split(",", -1);
            if (csv == null)
            {
                csv = new CsvRows(file, n, line);
                for (int i = 0; i < fields.length; i++)
                {
                    if (csv.columns.putIfAbsent(fields[i], i) != null)
                    {
                        throw new CsvFormatException(file, n, fields[i], "named twice in the header");
                    }
                }
            }
            else if (fields.length != csv.columns.size())
            {
                throw new CsvFormatException(file, n, null, "expected " + csv.columns.size() + " fields, got " +
                    fields.length + " (header: " + csv.header + "): " + line);
            }
            else
            {
                csv.rows.add(csv.new Row(n, fields));
            }
        }
        return csv != null ? csv : new CsvRows(file, 0, "");
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
