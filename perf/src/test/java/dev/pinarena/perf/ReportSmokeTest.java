package dev.pinarena.perf;

import dev.pinarena.perf.curve.RegistrationCostCurve;
import dev.pinarena.perf.report.CostCurves;
import dev.pinarena.perf.report.ReportMain;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.os.PageBacking;
import dev.pinarena.registration.uring.IoUringRegistrar;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keeps the registration-cost harness and the report writer from rotting: one tiny measurement, one report.
 * No timing is asserted.
 */
class ReportSmokeTest
{
    @Test
    void costCurveRowsFeedTheReport(@TempDir final Path dir) throws Exception
    {
        final Path results = Files.createDirectories(dir.resolve("results"));
        try (IoUringRegistrar registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            final String small = RegistrationCostCurve.measure(registrar, PageBacking.SMALL, 1L << 20, 2);
            final String huge = RegistrationCostCurve.measure(registrar, PageBacking.HUGETLB_2M, 1L << 20, 2);
            Files.write(results.resolve("reg-cost-io_uring.csv"), List.of(RegistrationCostCurve.HEADER, small, huge));
        }
        final CostCurves curves = CostCurves.read(List.of(results.resolve("reg-cost-io_uring.csv")));
        assertEquals(2, curves.points().size(), curves.points().toString());
        assertEquals(List.of("io_uring"), curves.backends());

        final Path report = dir.resolve("report");
        ReportMain.main(new String[] {results.toString(), report.toString(), "quick"});
        final String markdown = Files.readString(report.resolve("REPORT.md"));
        assertTrue(markdown.contains("## What does registration cost per MiB"), markdown);
        assertTrue(markdown.contains("| 1 MiB |"), markdown);
        assertTrue(Files.size(report.resolve("registration-cost.png")) > 1000, "chart written");
    }
}
