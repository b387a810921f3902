package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import java.util.List;

/**
 * The Java arena against {@link RuleModel}: the corpus, then generated sequences for
 * {@code pinarena.model.seconds} (default 30). A failure prints its seed, its shrunk sequence and the command
 * that replays it ({@link ModelCampaign}).
 */
class ArenaModelTest
{
    @Test
    void generatedSequencesKeepEveryRule()
    {
        try (ArenaModelDriver driver = new ArenaModelDriver())
        {
            new ModelCampaign("java", false, sequences -> runAll(driver, sequences), 1, "ArenaModelTest").run();
        }
    }

    private static ModelCampaign.Failure runAll(final ArenaModelDriver driver, final List<List<ModelOp>> sequences)
    {
        for (int i = 0; i < sequences.size(); i++)
        {
            try
            {
                driver.run(sequences.get(i));
            }
            catch (final AssertionError failure)
            {
                return new ModelCampaign.Failure(i, failure.getMessage());
            }
        }
        return null;
    }
}
