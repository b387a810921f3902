/* test_model.c — the allocator model's corpus (tests/model/corpus.txt: the
 * sequences that once broke a rule) replayed against the shim with the
 * rules of tests/model/replay.h. The generated sequences run from allocator's
 * ShimModelTest through pinarena-model-replay. */
#include "runner.h"
#include "model/replay.h"

#include <stdlib.h>
#include <unistd.h>

TEST(shim_model_corpus) {
  const char* path = getenv("PINARENA_MODEL_CORPUS");
  if (path == NULL) path = "tests/model/corpus.txt";
  CHECK(access(path, R_OK) == 0, "the model corpus %s cannot be read (run from bindings-c/ or set PINARENA_MODEL_CORPUS)",
        path);
  int count;
  CHECK(pa_model_replay_file(path, &count) == 0, "a corpus sequence broke a rule (the FAIL line above)");
  CHECK(count > 0, "no c: or both: sequence in %s", path);
  NOTE("%d corpus sequences", count);
}
