package dev.pinarena.perf.report;

import org.knowm.xchart.CategoryChart;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One question answered from JMH iterations: a benchmark class whose methods are pinarena and its
 * alternatives, compared per size as ratios of medians (with the spread the iterations allow) and drawn as
 * grouped bars of ns/op on a log axis.
 */
public final class JmhComparisonSection implements ReportSection
{
    private final JmhRuns runs;
    private final String question;
    private final String explanation;
    private final String benchmark;
    private final String subject;
    private final List<String> alternatives;
    private final String chartFile;

    /**
     * @param runs         the measured iterations.
     * @param question     the section heading.
     * @param explanation  a paragraph on what was measured.
     * @param benchmark    the JMH class's simple name.
     * @param subject      pinarena's method.
     * @param alternatives the other methods, in table order.
     * @param chartFile    PNG file name.
     */
    public JmhComparisonSection(
        final JmhRuns runs,
        final String question,
        final String explanation,
        final String benchmark,
        final String subject,
        final List<String> alternatives,
        final String chartFile)
    {
        this.runs = runs;
        this.question = question;
        this.explanation = explanation;
        this.benchmark = benchmark;
        this.subject = subject;
        this.alternatives = List.copyOf(alternatives);
        this.chartFile = chartFile;
    }

    public void write(final StringBuilder md, final Path reportDir) throws IOException
    {
        md.append("## ").append(question).append("\n\n");
        final List<String> sizes = runs.sizes(benchmark);
        if (sizes.isEmpty())
        {
            md.append("Not measured in this run.\n\n");
            return;
        }
        md.append(explanation).append(" JMH `").append(benchmark).append("`, ns per operation, min / median / max ")
            .append("over the measured iterations; ratios are alternative ÷ ").append(subject)
            .append(" (how many times faster ").append(subject).append(" is), median (min–max).\n\n");

        final List<String> methods = new ArrayList<>();
        methods.add(subject);
        methods.addAll(alternatives);
        md.append("| size |");
        for (final String method : methods)
        {
            md.append(' ').append(method).append(" ns |");
        }
        for (final String alternative : alternatives)
        {
            md.append(' ').append(alternative).append(" ÷ ").append(subject).append(" |");
        }
        md.append(' ').append(subject).append(" B/op |\n|---|")
            .append("---:|".repeat(methods.size() + alternatives.size() + 1)).append('\n');
        for (final String size : sizes)
        {
            md.append("| ").append(RegistrationCostSection.size(Long.parseLong(size))).append(" |");
            for (final String method : methods)
            {
                if (!runs.has(benchmark, method, size))
                {
                    md.append(" — |");
                    continue;
                }
                final Samples s = runs.nanos(benchmark, method, size);
                md.append(String.format(Locale.ROOT, " %s / %s / %s |", num(s.min()), num(s.median()), num(s.max())));
            }
            for (final String alternative : alternatives)
            {
                if (!runs.has(benchmark, alternative, size) || !runs.has(benchmark, subject, size))
                {
                    md.append(" — |");
                    continue;
                }
                final double[] r = Samples.ratio(runs.nanos(benchmark, alternative, size), runs.nanos(benchmark, subject, size));
                md.append(String.format(Locale.ROOT, " **%s×** (%s–%s) |", num(r[1]), num(r[0]), num(r[2])));
            }
            final double bytes = runs.has(benchmark, subject, size) ?
                runs.allocatedBytes(benchmark, subject, size).median() : Double.NaN;
            md.append(Double.isNaN(bytes) ? " — |" : String.format(Locale.ROOT, " %.3f |", bytes)).append('\n');
        }
        md.append('\n');

        final CategoryChart chart = Charts.bars(question, "size", "ns per op (median, log scale)", true);
        final List<String> labels = new ArrayList<>();
        for (final String size : sizes)
        {
            labels.add(RegistrationCostSection.size(Long.parseLong(size)));
        }
        for (final String method : methods)
        {
            final List<Double> values = new ArrayList<>();
            for (final String size : sizes)
            {
                values.add(runs.has(benchmark, method, size) ? runs.nanos(benchmark, method, size).median() : 0.0);
            }
            chart.addSeries(method, labels, values);
        }
        Charts.savePng(chart, reportDir.resolve(chartFile));
        md.append("![").append(question).append("](").append(chartFile).append(")\n\n");
    }

    private static String num(final double value)
    {
        if (value >= 100)
        {
            return String.format(Locale.ROOT, "%.0f", value);
        }
        return value >= 10 ? String.format(Locale.ROOT, "%.1f", value) : String.format(Locale.ROOT, "%.2f", value);
    }
}
