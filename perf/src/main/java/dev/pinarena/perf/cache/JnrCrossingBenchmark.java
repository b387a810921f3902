package dev.pinarena.perf.cache;

import dev.pinarena.registration.AgronaAccess;
import com.kenai.jffi.Library;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.Delegate;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * What it costs Java to use C code through jnr-ffi, the figure behind the choice between one registration
 * cache core (Java calling C on a miss, C calling the Java registrar back) and two twins (docs/ARCHITECTURE.md):
 * {@code downcall} (a libc function with no work: {@code labs}), {@code downcallWithPointer} ({@code strlen}
 * of a one-byte string: a pointer argument, as every cache call has), {@code qsortCallsC} and
 * {@code qsortCallsJava} (libc's qsort of two elements with a C comparator, {@code strcmp}, and with a Java
 * one: the difference is one upcall from C into Java).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class JnrCrossingBenchmark
{
    /** A C comparator, called back by qsort. */
    public interface Comparator
    {
        /**
         * @param a one element.
         * @param b the other.
         * @return their order.
         */
        @Delegate
        int compare(Pointer a, Pointer b);
    }

    /** The libc functions, the comparator passed as a Java callback. */
    public interface WithJavaComparator
    {
        /**
         * @param x a value.
         * @return its absolute value.
         */
        long labs(long x);

        /**
         * @param s a C string.
         * @return its length.
         */
        long strlen(Pointer s);

        /**
         * @param base the elements.
         * @param count how many.
         * @param size bytes each.
         * @param compare the Java comparator.
         */
        void qsort(Pointer base, long count, long size, Comparator compare);
    }

    /** qsort with the comparator as a native function address. */
    public interface WithNativeComparator
    {
        /**
         * @param base the elements.
         * @param count how many.
         * @param size bytes each.
         * @param compare the address of a C comparator.
         */
        void qsort(Pointer base, long count, long size, long compare);
    }

    private WithJavaComparator java;
    private WithNativeComparator nativeSort;
    private Comparator javaCompare;
    private long strcmp;
    private Pointer elements;
    private long x = -12345;

    /** Binds libc, finds strcmp, allocates two 8-byte elements holding short strings. */
    @Setup
    public void open()
    {
        java = LibraryLoader.create(WithJavaComparator.class).load("c");
        nativeSort = LibraryLoader.create(WithNativeComparator.class).load("c");
        strcmp = Library.getCachedInstance("libc.so.6", Library.LAZY).getSymbolAddress("strcmp");
        if (strcmp == 0)
        {
            throw new IllegalStateException("strcmp not found in libc.so.6");
        }
        javaCompare = (a, b) -> Byte.compare(a.getByte(0), b.getByte(0));
        elements = Runtime.getSystemRuntime().getMemoryManager().allocateDirect(16);
        elements.putByte(0, (byte)'b');
        elements.putByte(1, (byte)0);
        elements.putByte(8, (byte)'a');
        elements.putByte(9, (byte)0);
    }

    /** @return the result, so the call is not dead code. */
    @Benchmark
    public long downcall()
    {
        return java.labs(x--);
    }

    /** @return the result, so the call is not dead code. */
    @Benchmark
    public long downcallWithPointer()
    {
        return java.strlen(elements);
    }

    /** @return the first byte after sorting. */
    @Benchmark
    public byte qsortCallsC()
    {
        swap();
        nativeSort.qsort(elements, 2, 8, strcmp);
        return elements.getByte(0);
    }

    /** @return the first byte after sorting. */
    @Benchmark
    public byte qsortCallsJava()
    {
        swap();
        java.qsort(elements, 2, 8, javaCompare);
        return elements.getByte(0);
    }

    private void swap()
    {
        final byte first = elements.getByte(0);
        elements.putByte(0, elements.getByte(8));
        elements.putByte(8, first);
    }
}
