/* measure.c — runs one program and reports what it cost:
 *   measure OUTFILE PROGRAM [ARGS...]
 * The program runs with the environment given (LD_PRELOAD picks the allocator), its stdout and stderr
 * go to OUTFILE (the harness reads a fixed-duration program's own throughput figure from it), and one line
 * goes to stdout:  wall_s cpu_s peak_kib status
 * peak_kib = the largest resident set (wait4's ru_maxrss, the kernel's VmHWM) + the largest HugetlbPages
 * seen while the program ran (hugetlb memory is not in the resident set; read from /proc/PID/status every
 * 20 ms, the same sum perf/native/bench.c reports for itself). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* HugetlbPages of a running process in KiB; 0 once it has exited or if the line is absent. */
static long hugetlb_kib(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
  FILE* f = fopen(path, "r");
  long v = 0;
  if (!f) return 0;
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, "HugetlbPages:", 13)) { v = atol(line + 13); break; }
  fclose(f);
  return v;
}

/* SIGCHLD interrupts the 20 ms sleep, so the wall time ends when the program does. */
static void on_child(int sig) { (void)sig; }

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: measure OUTFILE PROGRAM [ARGS...]\n");
    return 2;
  }
  int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) { fprintf(stderr, "measure: %s: %s\n", argv[1], strerror(errno)); return 2; }
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_child;
  sigaction(SIGCHLD, &sa, NULL);
  double t0 = now();
  pid_t pid = fork();
  if (pid < 0) { perror("measure: fork"); return 2; }
  if (pid == 0) {
    dup2(out, 1);
    dup2(out, 2);
    execvp(argv[2], argv + 2);
    fprintf(stderr, "measure: cannot run %s: %s\n", argv[2], strerror(errno));
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  long huge = 0;
  double wall = 0;
  const struct timespec tick = { 0, 20 * 1000 * 1000 };
  for (;;) {
    pid_t r = wait4(pid, &status, WNOHANG, &ru);
    if (r == pid) { wall = now() - t0; break; }
    if (r < 0) { perror("measure: wait4"); return 2; }
    long h = hugetlb_kib(pid);
    if (h > huge) huge = h;
    nanosleep(&tick, NULL);
  }
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  printf("%.3f %.3f %ld %d\n", wall, cpu, ru.ru_maxrss + huge, code);
  return 0;
}
