package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * CsvRows: fields by column name and type; bad input refused with the file, line and column named.
 */
class CsvRowsTest
{
    @Test
    void fieldsByNameAndType(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("runs.csv");
        Files.write(csv, List.of("name,count,seconds,bytes", "", "a,3,1.5,", "name,count,seconds,bytes", "b,4,2e-3,12"));
        final List<CsvRows.Row> rows = CsvRows.read(csv).rows();
        assertEquals(2, rows.size(), "a blank line and a repeated header are passed over");
        assertEquals("a", rows.get(0).text("name"));
        assertEquals(3, rows.get(0).intValue("count"));
        assertEquals(1.5, rows.get(0).doubleValue("seconds"));
        assertTrue(Double.isNaN(rows.get(0).doubleOrNaN("bytes")), "an empty field is NaN");
        assertEquals(12L, rows.get(1).longValue("bytes"));
        assertEquals(5, rows.get(1).line());
        assertTrue(CsvRows.read(dir.resolve("absent.csv")).rows().isEmpty(), "a missing file has no rows");
    }

    @Test
    void missingColumnNamesFileHeaderLineAndColumn(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("runs.csv");
        Files.write(csv, List.of("", "name,count", "a,3"));
        final CsvRows.Row row = CsvRows.read(csv).rows().get(0);
        final CsvFormatException e = assertThrows(CsvFormatException.class, () -> row.doubleValue("seconds"));
        assertEquals(csv + ":2: column 'seconds': not in the header (name,count)", e.getMessage());
        assertEquals(2, e.line());
        assertEquals("seconds", e.column());
    }

    @Test
    void badNumberNamesFileLineAndColumn(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("runs.csv");
        Files.write(csv, List.of("name,count,seconds", "a,3,1.0", "b,4,fast", "c,x1,2.0"));
        final List<CsvRows.Row> rows = CsvRows.read(csv).rows();
        assertEquals(csv + ":3: column 'seconds': not a number: 'fast'",
            assertThrows(CsvFormatException.class, () -> rows.get(1).doubleValue("seconds")).getMessage());
        assertEquals(csv + ":4: column 'count': not an integer: 'x1'",
            assertThrows(CsvFormatException.class, () -> rows.get(2).intValue("count")).getMessage());
        assertEquals(csv + ":4: column 'count': not an integer: 'x1'",
            assertThrows(CsvFormatException.class, () -> rows.get(2).longValue("count")).getMessage());
    }

    @Test
    void rowWithOtherFieldCountOrHeaderNamingAColumnTwiceIsRefused(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("runs.csv");
        Files.write(csv, List.of("name,count,seconds", "a,3,1.0", "b,4"));
        final CsvFormatException e = assertThrows(CsvFormatException.class, () -> CsvRows.read(csv));
        assertEquals(csv + ":3: expected 3 fields, got 2 (header: name,count,seconds): b,4", e.getMessage());
        Files.write(csv, List.of("name,count,name", "a,3,b"));
        assertEquals(csv + ":1: column 'name': named twice in the header",
            assertThrows(CsvFormatException.class, () -> CsvRows.read(csv)).getMessage());
    }

    @Test
    void linesBeforeTheExpectedHeaderAreAPreambleAndAFileWithoutItIsRefused(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("curve.csv");
        Files.write(csv, List.of("device rxe0, GID index 1, QPs 17 <-> 18", "size,us", "4096,3.5"));
        final List<CsvRows.Row> rows = CsvRows.read(csv, CsvLayout.afterPreamble("size,us")).rows();
        assertEquals(1, rows.size());
        assertEquals(3, rows.get(0).line());
        Files.write(csv, List.of("device rxe0, GID index 1, QPs 17 <-> 18", "4096,3.5"));
        assertEquals(csv + ":2: no header line 'size,us' after 2 line(s) of preamble",
            assertThrows(CsvFormatException.class, () -> CsvRows.read(csv, CsvLayout.afterPreamble("size,us"))).getMessage());
    }

    @Test
    void theTextColumnTakesExtraFieldsAndAHeaderlessFileItsGivenColumns(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("cuts.csv");
        Files.write(csv, List.of("jmh,Batch,100 ms of warmup, in the suite's JVM", "malloc,big,1 of 3 rounds"));
        final CsvLayout cuts = CsvLayout.headerless("step,subject,cut").commasIn("cut");
        final List<CsvRows.Row> rows = CsvRows.read(csv, cuts).rows();
        assertEquals("100 ms of warmup, in the suite's JVM", rows.get(0).text("cut"));
        assertEquals("big", rows.get(1).text("subject"));
        Files.write(csv, List.of("step,budget_s,seconds", "build (mvn, package),25,4"));
        final CsvRows.Row step = CsvRows.read(csv, CsvLayout.headerFirst().commasIn("step")).rows().get(0);
        assertEquals("build (mvn, package)", step.text("step"));
        assertEquals(4, step.intValue("seconds"));
        assertEquals(csv + ":2: expected 3 fields, got 4 (header: step,budget_s,seconds): build (mvn, package),25,4",
            assertThrows(CsvFormatException.class, () -> CsvRows.read(csv)).getMessage(), "no text column: refused");
        assertEquals(csv + ":1: column 'name': not in the header (step,budget_s,seconds)",
            assertThrows(CsvFormatException.class, () -> CsvRows.read(csv, CsvLayout.headerFirst().commasIn("name")))
                .getMessage());
    }
}
