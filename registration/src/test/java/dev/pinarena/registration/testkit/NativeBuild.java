package dev.pinarena.registration.testkit;

import java.io.File;
import java.io.IOException;

/**
 * What bindings-c built, for the tests that load or preload it: bindings-c builds first in the Maven reactor,
 * into the directory Maven passes as the system property {@code pinarena.native.dir} (surefire on the host,
 * {@code testbed/run-junit} in the guest).
 */
public final class NativeBuild
{
    private static final String PROPERTY = "pinarena.native.dir";

    private NativeBuild()
    {
    }

    /**
     * @param name a file bindings-c's {@code make all} builds, e.g. {@code libpinarena-hooks.so}.
     * @return its canonical path.
     * @throws IllegalStateException naming the property or the missing file and the build that makes it.
     */
    public static String file(final String name) throws IOException
    {
        final String dir = System.getProperty(PROPERTY);
        if (dir == null)
        {
            throw new IllegalStateException(PROPERTY + " is not set: run the tests through Maven " +
                "(mvn -B -pl bindings-c,registration test), which builds bindings-c first and passes its directory");
        }
        final File file = new File(dir, name).getCanonicalFile();
        if (!file.isFile())
        {
            throw new IllegalStateException(file + " is missing: bindings-c's build makes it " +
                "(mvn -B -pl bindings-c,registration test, or make -C bindings-c BUILD=" + dir + " all)");
        }
        return file.getPath();
    }
}
