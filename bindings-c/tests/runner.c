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

/* A test's limit in seconds of an idle host: PINARENA_TEST_TIMEOUT where the default is too short, times
   PINARENA_TIME_SCALE where a caller measured a slowdown the runner cannot see (the Soft-RoCE guest's
   emulation, testbed/softroce). */
static unsigned test_limit_s(void) {
  const char* tmo = getenv("PINARENA_TEST_TIMEOUT");
  const char* scale = getenv("PINARENA_TIME_SCALE");
  unsigned limit = tmo != NULL && atoi(tmo) > 0 ? (unsigned)atoi(tmo) : TEST_TIMEOUT_S;
  return limit * (scale != NULL && atoi(scale) > 0 ? (unsigned)atoi(scale) : 1u);
}

static double thread_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* How many times slower than idle a thread runs here now: the wall time a 5 ms busy loop takes over its
   CPU time, between 1 and 8. Costs 5 ms of CPU, taken once a second while a test runs. */
static double host_slowdown(void) {
  double w0 = pa_test_now(), c0 = thread_cpu_now();
  volatile unsigned spin = 0;
  while (thread_cpu_now() - c0 < 0.005) spin++;
  double r = (pa_test_now() - w0) / (thread_cpu_now() - c0);
  return r < 1.0 ? 1.0 : r > 8.0 ? 8.0 : r;
}

/* Waits for the test process. Its budget is counted in idle-host seconds: each second of wall time counts
   1 / (the slowdown measured in that second), so a busy machine stretches the limit rather than failing
   a correct test, and a test that hangs on an idle machine is still stopped after the limit. On expiry the
   test's process group is killed; returns 1 then, 0 when the test ended by itself. */
static int await_test(pid_t pid, unsigned limit_s, int* st) {
  double used = 0.0;
  for (;;) {
    double t0 = pa_test_now();
    for (int i = 0; i < 20; i++) {
      pid_t r = waitpid(pid, st, WNOHANG);
      if (r == pid) return 0;
      if (r < 0 && errno != EINTR) return 0;
      struct timespec tick = { 0, 50 * 1000 * 1000 };
      nanosleep(&tick, NULL);
    }
    used += (pa_test_now() - t0) / host_slowdown();
    if (used > (double)limit_s) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, st, 0) < 0 && errno == EINTR) {}
      return 1;
    }
  }
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
      setpgid(0, 0);   /* the whole test, its own children included, is killed on timeout */
      t->fn();
      fflush(stdout);
      _exit(0);
    }
    close(p[1]);
    int st = 0;
    int timed_out = await_test(pid, test_limit_s(), &st);
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
      if (timed_out)
        printf("FAIL %s: timeout: ran past %u idle-host seconds (wall time divided by the slowdown "
               "measured each second)%s%s\n", t->name, test_limit_s(), reason[0] ? ": " : "", reason);
      else if (WIFSIGNALED(st))
        printf("FAIL %s: killed by signal %d (%s)%s%s\n", t->name, WTERMSIG(st), strsignal(WTERMSIG(st)),
               WTERMSIG(st) == SIGALRM ? ": timeout" : "", reason[0] ? reason : "");
      else
        printf("FAIL %s: %s\n", t->name, reason[0] ? reason : "exited non-zero without a reason");
    }
  }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed > 0 ? 1 : 0;
}
