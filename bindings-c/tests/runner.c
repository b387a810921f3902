/* runner.c — runs every TEST in its own forked child (a crash fails only that
 * test), prints PASS/FAIL/SKIP with the reason, then "N passed, N failed, N skipped". */
#include "runner.h"
#include "diag.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const pa_test_t __start_pa_tests[];
extern const pa_test_t __stop_pa_tests[];

#define EXIT_SKIP 77
#define TEST_TIMEOUT_S 300

static int reason_fd = -1;   /* child end of the pipe that carries FAIL/SKIP reasons */

static void reason_write(const char* s) {
  if (reason_fd >= 0) { ssize_t w = write(reason_fd, s, strlen(s)); (void)w; }
}

void pa_fail(const char* file, int line, const char* fmt, ...) {
  char msg[1024];
  int n = snprintf(msg, sizeof(msg), "%s:%d: ", file, line);
  va_list ap; va_start(ap, fmt);
  vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
  va_end(ap);
  fflush(stdout);
  reason_write(msg);
  _exit(1);
}

void pa_fail_call(const char* file, int line, const char* call, int err) {
  pa_fail(file, line, "%s failed: %s (%d)%s%s", call, pa_errno_name(err), err,
          *pa_diag_hint(call, err) ? ": " : "", pa_diag_hint(call, err));
}

void pa_skip(const char* fmt, ...) {
  char msg[1024];
  va_list ap; va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fflush(stdout);
  reason_write(msg);
  _exit(EXIT_SKIP);
}

void pa_note(const char* fmt, ...) {
  va_list ap; va_start(ap, fmt);
  fputs("      ", stdout);
  vprintf(fmt, ap);
  fputc('\n', stdout);
  va_end(ap);
  fflush(stdout);
}

double pa_test_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const char* filter = (argc > 1 ? argv[1] : NULL);
  int passed = 0, failed = 0, skipped = 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (const pa_test_t* t = __start_pa_tests; t < __stop_pa_tests; t++) {
    if (filter != NULL && strstr(t->name, filter) == NULL) continue;
    int p[2];
    if (pipe(p) != 0) { perror("pipe"); return 2; }
    printf("RUN  %s\n", t->name);
    fflush(stdout);
    double t0 = pa_test_now();
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 2; }
    if (pid == 0) {
      close(p[0]);
      reason_fd = p[1];
      /* PINARENA_TEST_TIMEOUT: seconds per test where the default is too
         short; PINARENA_TIME_SCALE (the Soft-RoCE VM's measured slowdown of
         the host, testbed/softroce) multiplies either */
      const char* tmo = getenv("PINARENA_TEST_TIMEOUT");
      const char* scale = getenv("PINARENA_TIME_SCALE");
      unsigned limit = tmo != NULL && atoi(tmo) > 0 ? (unsigned)atoi(tmo) : TEST_TIMEOUT_S;
      alarm(limit * (scale != NULL && atoi(scale) > 0 ? (unsigned)atoi(scale) : 1u));
      t->fn();
      fflush(stdout);
      _exit(0);
    }
    close(p[1]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    char reason[1100];
    ssize_t n = read(p[0], reason, sizeof(reason) - 1);
    close(p[0]);
    reason[n > 0 ? n : 0] = 0;
    double ms = (pa_test_now() - t0) * 1e3;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      passed++;
      printf("PASS %s (%.0f ms)\n", t->name, ms);
    }
    else if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_SKIP) {
      skipped++;
      printf("SKIP %s: %s\n", t->name, reason[0] ? reason : "(no reason given)");
    }
    else {
      failed++;
      if (WIFSIGNALED(st))
        printf("FAIL %s: killed by signal %d (%s)%s%s\n", t->name, WTERMSIG(st), strsignal(WTERMSIG(st)),
               WTERMSIG(st) == SIGALRM ? ": timeout" : "", reason[0] ? reason : "");
      else
        printf("FAIL %s: %s\n", t->name, reason[0] ? reason : "exited non-zero without a reason");
    }
  }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed > 0 ? 1 : 0;
}
