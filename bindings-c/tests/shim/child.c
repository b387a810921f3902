#define _GNU_SOURCE
#include "child.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

su_result_t su_run(void (*fn)(void*), void* arg) {
  su_result_t r;
  memset(&r, 0, sizeof(r));
  int p[2];
  CHECK(pipe(p) == 0, "pipe");
  pid_t pid = fork();
  CHECK(pid >= 0, "fork");
  if (pid == 0) {
    close(p[0]);
    dup2(p[1], 2);
    signal(SIGABRT, SIG_DFL);
    fn(arg);
    _exit(0);
  }
  close(p[1]);
  size_t n = 0;
  ssize_t k;
  while (n < sizeof(r.err) - 1 && (k = read(p[0], r.err + n, sizeof(r.err) - 1 - n)) > 0) n += (size_t)k;
  r.err[n] = 0;
  close(p[0]);
  int st;
  waitpid(pid, &st, 0);
  r.signaled = WIFSIGNALED(st);
  r.sig = r.signaled ? WTERMSIG(st) : 0;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

void su_child_ok(void (*fn)(void*), const char* what) {
  su_result_t r = su_run(fn, NULL);
  CHECK(!r.signaled && r.status == 0, "%s: child %s %d: %s", what, r.signaled ? "killed by signal" : "exit",
        r.signaled ? r.sig : r.status, r.err);
}

void su_fork_reads(char* q, size_t n, char c) {
  memset(q, c, n);
  pid_t pid = fork();
  CHILD_CHECK(pid >= 0, "fork");
  if (pid == 0) {
    for (size_t i = 0; i < n; i++) if (q[i] != c) _exit(3);
    _exit(0);
  }
  int st;
  CHILD_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
  CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the forked child of the next owner: %s %d (3: it saw other bytes "
              "than the parent's)", WIFSIGNALED(st) ? "killed by signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

#define MIB ((size_t)1 << 20)
void su_munmap_mib(void* p) { munmap(p, MIB); }
void su_mmap_fixed_mib(void* p) { mmap(p, MIB, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); }
void su_mremap_mib(void* p) { mremap(p, MIB, 2 * MIB, MREMAP_MAYMOVE); }

void su_expect_abort(void (*fn)(void*), void* arg, const char* want, const void* ptr) {
  su_result_t r = su_run(fn, arg);
  char hex[32];
  snprintf(hex, sizeof(hex), "%p", ptr);
  CHECK(r.signaled && r.sig == SIGABRT, "expected SIGABRT, got signaled=%d sig=%d status=%d err='%s'", r.signaled, r.sig, r.status, r.err);
  CHECK(strstr(r.err, want) != NULL, "stderr lacks '%s': '%s'", want, r.err);
  CHECK(strstr(r.err, hex) != NULL, "stderr lacks the pointer %s: '%s'", hex, r.err);
  char* nl = strchr(r.err, '\n');
  CHECK(nl != NULL && nl[1] == 0, "expected exactly one line: '%s'", r.err);
  NOTE("%s", r.err[0] ? strtok(r.err, "\n") : "");
}

const char* su_so(void) {
  const char* so = getenv("PINARENA_SO");
  if (so == NULL) SKIP("PINARENA_SO not set (run through make test)");
  return so;
}

int su_exec(char* const argv[], const char* const env[], char* out, size_t cap) {
  return su_exec_prepared(argv, env, NULL, out, cap);
}

int su_exec_prepared(char* const argv[], const char* const env[], void (*prepare)(void), char* out, size_t cap) {
  int p[2];
  CHECK(pipe(p) == 0, "pipe");
  const char* so = su_so();
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    dup2(p[1], 1); dup2(p[1], 2);
    setenv("LD_PRELOAD", so, 1);
    for (size_t i = 0; env && env[i]; i++) putenv((char*)env[i]);
    if (prepare) prepare();
    execvp(argv[0], argv);
    _exit(127);
  }
  close(p[1]);
  size_t n = 0;
  ssize_t k;
  while (n < cap - 1 && (k = read(p[0], out + n, cap - 1 - n)) > 0) n += (size_t)k;
  out[n] = 0;
  close(p[0]);
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int su_rdma_device_present(void) {
  DIR* d = opendir("/sys/class/infiniband");
  if (d == NULL) return 0;
  int n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) if (e->d_name[0] != '.') n++;
  closedir(d);
  return n > 0;
}
