/* main.c — pinarena-model-replay: replays model sequences against the shim
 * this program is linked with (libpinarena.so).
 *   pinarena-model-replay FILE        every sequence of FILE (one per line)
 *   pinarena-model-replay -e 'a0:100 k0 f0'   one sequence
 * Prints "ok N" and exits 0, or "FAIL <line> <message>" and exits 1; a fatal
 * signal (a fault, an abort from the shim) prints "FAIL <line> op #<n>:
 * signal <s>" first. allocator's ShimModelTest runs it on generated
 * sequences and shrinks what fails. */
#include "replay.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void put_num(char** w, long v) {
  char tmp[24];
  int n = 0;
  if (v < 0) { *(*w)++ = '-'; v = -v; }
  do tmp[n++] = (char)('0' + v % 10); while ((v /= 10) > 0);
  while (n) *(*w)++ = tmp[--n];
}

static void on_fatal(int sig) {
  char msg[128], *w = msg;
  memcpy(w, "FAIL ", 5); w += 5;
  put_num(&w, pa_model_line);
  memcpy(w, " op #", 5); w += 5;
  put_num(&w, pa_model_op_index);
  memcpy(w, ": signal ", 9); w += 9;
  put_num(&w, sig);
  *w++ = '\n';
  (void)!write(1, msg, (size_t)(w - msg));
  signal(sig, SIG_DFL);
  raise(sig);
}

int main(int argc, char** argv) {
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
  for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) signal(fatal[i], on_fatal);
  if (argc == 3 && strcmp(argv[1], "-e") == 0) {
    static char err[1024];
    pa_model_line = 1;
    if (pa_model_replay(argv[2], err, sizeof err) != 0) { printf("FAIL 1 %s\n", err); return 1; }
    printf("ok 1\n");
    return 0;
  }
  if (argc != 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: %s FILE | -e 'SEQUENCE'\n", argv[0]);
    return 2;
  }
  int count;
  if (pa_model_replay_file(argv[1], &count) != 0) return 1;
  printf("ok %d\n", count);
  return 0;
}
