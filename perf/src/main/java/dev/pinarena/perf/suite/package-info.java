/** The JMH suite as {@code ./pinarena bench} runs it. */
package dev.pinarena.perf.suite;
