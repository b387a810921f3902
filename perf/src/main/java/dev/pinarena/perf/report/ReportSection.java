package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Path;

/**
 * One question a user asks of the report, answered from one run's results: a Markdown section and the
 * charts it links to.
 */
public interface ReportSection
{
    /**
     * Appends the section (heading included) to the report, writing its charts next to it.
     *
     * @param markdown  the report so far.
     * @param reportDir where charts go; links are relative to it.
     * @throws IOException if a chart cannot be written.
     */
    void write(StringBuilder markdown, Path reportDir) throws IOException;
}
