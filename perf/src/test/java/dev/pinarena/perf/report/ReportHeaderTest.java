package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The report's first line dates the whole run its results come from, not the moment the report was written: a
 * report written again from old results (or after a {@code --step}) keeps the run's date.
 */
class ReportHeaderTest
{
    @Test
    void theHeaderDatesTheWholeRunNotTheWriting(@TempDir final Path dir) throws Exception
    {
        final Path results = Files.createDirectories(dir.resolve("results"));
        final Path mode = Files.writeString(results.resolve("mode"), "full\n");
        Files.setLastModifiedTime(mode, FileTime.from(Instant.parse("2026-01-02T03:04:05.678Z")));
        final Path report = dir.resolve("report");
        ReportMain.main(new String[] {results.toString(), report.toString(), "full"});
        final String markdown = Files.readString(report.resolve("REPORT.md"));
        assertTrue(markdown.contains("Measured by `./pinarena bench` in a full run started 2026-01-02T03:04:05Z."),
            markdown.lines().limit(4).toList().toString());
        assertFalse(markdown.contains(Instant.now().toString().substring(0, 10)),
            "today's date is in the report: " + markdown.lines().limit(4).toList());
    }
}
