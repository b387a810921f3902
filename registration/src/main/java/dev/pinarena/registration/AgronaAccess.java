package dev.pinarena.registration;

/**
 * Agrona 2 reaches {@code jdk.internal.misc.Unsafe}, which the JVM exports only when started with
 * {@value #FLAG}. Without it the first Agrona buffer fails with an {@link IllegalAccessError} that names no
 * fix; {@link #require()} fails first, with a message that names the flag.
 */
public final class AgronaAccess
{
    /** The option's name, as one argument of a child JVM's command line. */
    public static final String EXPORTS_OPTION = "--add-exports";
    /** The option's value, the argument after {@link #EXPORTS_OPTION}. */
    public static final String EXPORTS_VALUE = "java.base/jdk.internal.misc=ALL-UNNAMED";
    /**
     * The JVM option every JVM using pinarena needs. Defined here for Java, as pinarena.jvm.exports in the
     * parent pom for Maven, and in jvm-exports.args (a java @argfile) for the scripts.
     */
    public static final String FLAG = EXPORTS_OPTION + " " + EXPORTS_VALUE;

    private AgronaAccess()
    {
    }

    /**
     * @throws MissingExportsException if {@code jdk.internal.misc} is not exported to Agrona.
     */
    public static void require()
    {
        final Module agrona = org.agrona.UnsafeApi.class.getModule(); // a class literal: no initialization
        if (!Object.class.getModule().isExported("jdk.internal.misc", agrona))
        {
            throw new MissingExportsException("pinarena's buffers (Agrona 2) need jdk.internal.misc: start the JVM with " +
                FLAG + (agrona.isNamed() ? " (on the module path: =" + agrona.getName() + ")" : "") +
                " (Maven Surefire: <argLine>; Gradle: jvmArgs; java: on the command line)");
        }
    }
}
