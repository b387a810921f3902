/** The report {@code ./pinarena bench} writes (perf/report/REPORT.md) and its charts. */
package dev.pinarena.perf.report;
