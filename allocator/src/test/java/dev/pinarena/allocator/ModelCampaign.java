package dev.pinarena.allocator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One side's run of the model (the Java arena or the C shim): the corpus first, then generated sequences from
 * a fresh base seed until the time budget is spent; a failure is shrunk and reported with its seed, its
 * sequence and the one command that replays it. Properties: {@code pinarena.model.seconds} (budget, default
 * 30), {@code pinarena.model.seed} (run that seed alone), {@code pinarena.model.sequence} (run that text alone),
 * {@code pinarena.model.without} (operation letters left out of generated sequences, e.g. {@code m} on a shim
 * that predates madvise support), {@code pinarena.model.corpus=skip} (generated sequences only).
 */
final class ModelCampaign
{
    /** The corpus of sequences that once broke a rule, replayed on every run (both sides read it). */
    static final Path CORPUS = Path.of("..", "bindings-c", "tests", "model", "corpus.txt");

    /** A side's way to run sequences. */
    interface Runner
    {
        /**
         * @param sequences legal sequences for this side.
         * @return the first failure, or null if every sequence kept every rule.
         */
        Failure runAll(List<List<ModelOp>> sequences);
    }

    /** Which sequence of a batch failed, and how. */
    record Failure(int index, String message)
    {
    }

    private final String side;
    private final boolean cSide;
    private final Runner runner;
    private final int batch;
    private final String testName;

    ModelCampaign(final String side, final boolean cSide, final Runner runner, final int batch, final String testName)
    {
        this.side = side;
        this.cSide = cSide;
        this.runner = runner;
        this.batch = batch;
        this.testName = testName;
    }

    void run()
    {
        final String sequence = System.getProperty("pinarena.model.sequence");
        if (sequence != null)
        {
            check("the given sequence", ModelOp.parseLine(sequence), null);
            return;
        }
        final String seedProperty = System.getProperty("pinarena.model.seed");
        if (seedProperty != null)
        {
            final long seed = Long.parseLong(seedProperty);
            check("seed " + seed, generate(seed), seed);
            return;
        }
        // pinarena.model.corpus=skip: only generated sequences (on older code the corpus fails by design)
        final List<List<ModelOp>> corpus = "skip".equals(System.getProperty("pinarena.model.corpus")) ? List.of() : corpus(cSide);
        final Failure corpusFailure = runner.runAll(corpus);
        if (corpusFailure != null)
        {
            check("corpus line '" + ModelOp.format(corpus.get(corpusFailure.index())) + "'",
                corpus.get(corpusFailure.index()), null);
        }

        final long budgetNanos = Long.getLong("pinarena.model.seconds", 30) * 1_000_000_000L;
        final long base = new SplittableRandom().nextLong() & Long.MAX_VALUE;
        final long start = System.nanoTime();
        long sequences = 0;
        long ops = 0;
        while (System.nanoTime() - start < budgetNanos)
        {
            final List<List<ModelOp>> generated = new ArrayList<>();
            for (int i = 0; i < batch; i++)
            {
                generated.add(generate(base + sequences + i));
            }
            final Failure failure = runner.runAll(generated);
            if (failure != null)
            {
                final long seed = base + sequences + failure.index();
                check("seed " + seed, generated.get(failure.index()), seed);
                throw new AssertionError("seed " + seed + " failed in a batch but passes alone: " + failure.message() +
                    "\nreplay the batch: base seed " + base + ", sequences " + sequences + ".." + (sequences + batch - 1));
            }
            sequences += batch;
            for (final List<ModelOp> one : generated)
            {
                ops += one.size();
            }
        }
        System.out.printf("model (%s): %d corpus + %d generated sequences, %d operations, in %.1f s (base seed %d)%n",
            side, corpus.size(), sequences, ops, (System.nanoTime() - start) / 1e9, base);
    }

    private List<ModelOp> generate(final long seed)
    {
        final String without = System.getProperty("pinarena.model.without", "");
        final List<ModelOp> ops = SequenceGenerator.generate(seed, cSide);
        ops.removeIf(op -> without.indexOf(op.kind()) >= 0);
        return RuleModel.normalize(ops, cSide);
    }

    /** Runs one sequence alone; on failure shrinks it and fails with the replay command. */
    private void check(final String what, final List<ModelOp> ops, final Long seed)
    {
        final Failure failure = runner.runAll(List.of(ops));
        if (failure == null)
        {
            System.out.println("model (" + side + "): " + what + " passes: " + ModelOp.format(ops));
            return;
        }
        final List<ModelOp> shrunk = new Shrinker(candidate -> runner.runAll(List.of(candidate)) != null, cSide, 300)
            .shrink(ops);
        final Failure shrunkFailure = runner.runAll(List.of(shrunk));
        final String replay = "mvn -B -q -pl allocator -am verify -Dtest=" + testName +
            (seed != null ? " -Dpinarena.model.seed=" + seed : "") + " -Dpinarena.model.sequence='" + ModelOp.format(shrunk) + "'";
        throw new AssertionError("model (" + side + "): " + what + " broke a rule\n  sequence: " + ModelOp.format(ops) +
            "\n  failure: " + failure.message() +
            "\n  shrunk (" + shrunk.size() + " ops): " + ModelOp.format(shrunk) +
            "\n  its failure: " + (shrunkFailure == null ? "(passes alone: flaky)" : shrunkFailure.message()) +
            "\n  replay: " + replay.replace(" -Dpinarena.model.sequence", "\n  or the shrunk one: -Dpinarena.model.sequence"));
    }

    /** The corpus lines for one side: {@code java:}, {@code c:} or {@code both:}, '#' starts a comment. */
    static List<List<ModelOp>> corpus(final boolean cSide)
    {
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(CORPUS);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("the model corpus " + CORPUS.toAbsolutePath() + " cannot be read", ex);
        }
        final List<List<ModelOp>> sequences = new ArrayList<>();
        for (final String raw : lines)
        {
            final String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#"))
            {
                continue;
            }
            final int colon = line.indexOf(':');
            final String tag = colon < 0 ? "" : line.substring(0, colon);
            if (!tag.equals("java") && !tag.equals("c") && !tag.equals("both"))
            {
                throw new IllegalArgumentException(CORPUS + ": '" + line + "' does not start with java:, c: or both:");
            }
            if (tag.equals("both") || tag.equals(cSide ? "c" : "java"))
            {
                sequences.add(ModelOp.parseLine(line.substring(colon + 1)));
            }
        }
        return sequences;
    }
}
