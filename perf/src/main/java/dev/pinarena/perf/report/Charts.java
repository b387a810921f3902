package dev.pinarena.perf.report;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The chart styles of the report, so every chart looks alike: PNG, 900×540, legend inside, log axes where
 * the data spans decades.
 */
public final class Charts
{
    /** Width of every chart in pixels. */
    public static final int WIDTH = 900;
    /** Height of every chart in pixels. */
    public static final int HEIGHT = 540;

    private Charts()
    {
    }

    /**
     * @param title  chart title (the question it answers).
     * @param xTitle x axis.
     * @param yTitle y axis.
     * @return a line chart with logarithmic axes.
     */
    public static XYChart logLog(final String title, final String xTitle, final String yTitle)
    {
        final XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
            .title(title).xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        chart.getStyler().setMarkerSize(6);
        return chart;
    }

    /**
     * @param title  chart title.
     * @param xTitle category axis.
     * @param yTitle value axis.
     * @param logY   logarithmic value axis (drawn as lines with markers: a bar has no base on a log axis).
     * @return a grouped bar chart, or a category line chart when {@code logY}.
     */
    public static CategoryChart bars(final String title, final String xTitle, final String yTitle, final boolean logY)
    {
        final CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT)
            .title(title).xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setYAxisLogarithmic(logY);
        if (logY)
        {
            chart.getStyler().setDefaultSeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Line);
            chart.getStyler().setMarkerSize(8);
        }
        return chart;
    }

    /**
     * @param chart any XChart chart.
     * @param file  target PNG.
     * @throws IOException if it cannot be written.
     */
    public static void savePng(final org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, final Path file)
        throws IOException
    {
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
