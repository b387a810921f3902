/* abort-trace.c — preloaded into the guest JVM by testbed/run-junit: when something in the process
 * calls abort() (glibc's "free(): invalid pointer" does), say who did before the process dies.
 *
 * A JVM that aborts in native code leaves no hs_err file and no Java stack: the console shows glibc's
 * one line and "Aborted". This handler prints, on stderr, the aborting thread's name and its native
 * frames (backtrace_symbols_fd: library+offset, enough for addr2line), then sends the process SIGQUIT,
 * on which the JVM prints every thread's Java stack to stdout (a thread inside a native call is at a
 * safepoint already, so the dump does not wait for it): the aborting thread appears there with the Java
 * frames that made the call. After a pause for that dump the default action runs, so the exit status
 * stays the abort's (134).
 *
 * Nothing here runs unless the process aborts; the constructor only installs the handler (and calls
 * backtrace() once, which loads libgcc's unwinder now rather than inside a corrupted heap). */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAMES 64
#define DUMP_WAIT_SECONDS 3

static void on_abort(int sig, siginfo_t* info, void* context) {
  (void)info; (void)context;
  char name[17] = {0};
  prctl(PR_GET_NAME, name);
  char line[160];
  int n = snprintf(line, sizeof line,
                   "\nabort-trace: SIGABRT in thread \"%s\" (tid %d); its native frames:\n", name, (int)gettid());
  if (write(STDERR_FILENO, line, (size_t)n) < 0) { /* nothing to do */ }
  void* frames[MAX_FRAMES];
  backtrace_symbols_fd(frames, backtrace(frames, MAX_FRAMES), STDERR_FILENO);
  static const char dump[] = "abort-trace: asking the JVM for every thread's Java stack (SIGQUIT)\n";
  if (write(STDERR_FILENO, dump, sizeof dump - 1) < 0) { /* nothing to do */ }
  kill(getpid(), SIGQUIT);
  struct timespec wait = { DUMP_WAIT_SECONDS, 0 };
  while (nanosleep(&wait, &wait) != 0) { }
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  void* warm[2];
  backtrace(warm, 2);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_abort;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigaction(SIGABRT, &sa, NULL);
}
