package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The C shim against the same rules: {@link SequenceGenerator}'s sequences (C operations included) written
 * out as text and replayed by bindings-c's {@code pinarena-model-replay} (a program on libpinarena.so, the
 * checks in {@code bindings-c/tests/model/replay.c}), in batches of {@value #BATCH} per process. A failing
 * sequence is run alone in a fresh process while it is shrunk ({@link ModelCampaign}).
 */
class ShimModelTest
{
    private static final int BATCH = 40;
    private static final long PROCESS_SECONDS = 120;

    @Test
    void generatedSequencesKeepEveryRuleOnTheShim() throws IOException
    {
        // pinarena.model.replay: another build of the driver (an older shim's, to see what the model finds there)
        final Path replay = Path.of(System.getProperty("pinarena.model.replay", nativeDir() + "/pinarena-model-replay"));
        if (!Files.isExecutable(replay))
        {
            throw new IllegalStateException(replay + " is missing: build bindings-c first (mvn -pl allocator -am)");
        }
        final Path input = Files.createTempFile("pinarena-model", ".txt");
        try
        {
            new ModelCampaign("c", true, sequences -> runAll(replay, input, sequences), BATCH, "ShimModelTest").run();
        }
        finally
        {
            Files.deleteIfExists(input);
        }
    }

    private static ModelCampaign.Failure runAll(final Path replay, final Path input, final List<List<ModelOp>> sequences)
    {
        final List<String> lines = new ArrayList<>();
        sequences.forEach(ops -> lines.add(ModelOp.format(ops)));
        try
        {
            Files.write(input, lines, StandardCharsets.US_ASCII);
            final Process process = new ProcessBuilder(replay.toString(), input.toString())
                .redirectErrorStream(true)
                .start();
            process.getOutputStream().close();
            final byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return new ModelCampaign.Failure(0, "the replay did not end in " + PROCESS_SECONDS + " s");
            }
            final String text = new String(out, StandardCharsets.UTF_8);
            for (final String line : text.split("\n"))
            {
                if (line.startsWith("FAIL "))
                {
                    final String[] parts = line.split(" ", 3);
                    return new ModelCampaign.Failure(Math.max(0, Integer.parseInt(parts[1]) - 1), parts[2]);
                }
            }
            if (process.exitValue() != 0 || !text.contains("ok " + sequences.size()))
            {
                return new ModelCampaign.Failure(0, "the replay ended with status " + process.exitValue() + ": " + text);
            }
            return null;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private static String nativeDir()
    {
        final String dir = System.getProperty("pinarena.native.dir");
        if (dir == null)
        {
            throw new IllegalStateException("pinarena.native.dir is not set: run through Maven");
        }
        return dir;
    }
}
