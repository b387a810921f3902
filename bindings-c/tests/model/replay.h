/* replay.h — the C side of the allocator model (issue 26): replays operation
 * sequences written by allocator/src/test/java/dev/pinarena/allocator/
 * SequenceGenerator.java (text format: ModelOp.java) against the malloc shim
 * this process runs on, with the rules of RuleModel.java checked in C:
 * unique and disjoint blocks, contents until free, frames of looked-up pages
 * fixed until a release callback names them, keys covering their block and
 * stable until released, releases only from trim or realloc and never under
 * a live block. */
#ifndef PA_MODEL_REPLAY_H
#define PA_MODEL_REPLAY_H

#include <stddef.h>

/* Replay one sequence (one line of tokens). Returns 0, or -1 with a message
 * naming the operation, its position and the broken rule in err. */
int pa_model_replay(const char* line, char* err, size_t errlen);

/* Replay every sequence of a file: one per line; blank lines and '#'
 * comments skipped, "c:" and "both:" lines replayed, "java:" lines skipped.
 * Prints "FAIL <line> <message>" to stdout for the first failure and
 * returns -1; 0 if all passed. *count gets the sequences replayed. */
int pa_model_replay_file(const char* path, int* count);

/* The line and operation being replayed (for a fatal signal's report). */
extern volatile int pa_model_op_index, pa_model_line;

#endif
