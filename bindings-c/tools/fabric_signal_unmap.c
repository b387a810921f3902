/* fabric_signal_unmap.c — an unmap from a signal handler that interrupted
 * libfabric while it held one of its locks.
 *
 *   pinarena-fabric-signal-unmap SECONDS      (FI_PROVIDER=tcp: any host)
 *
 * The program opens a fabric (under libpinarena.so the shim's memory monitor
 * is imported there), then unmaps 1 MiB with a trap set: this program's
 * pthread_mutex_lock (an executable's definition wins libfabric's lookup)
 * raises SIGUSR1 the first time libfabric takes a mutex during that munmap,
 * right after taking it; the handler maps and unmaps a page (munmap is
 * async-signal-safe). A monitor that calls libfabric from the unmap path
 * makes the handler's munmap take the same mutex again on the same thread:
 * it waits forever, and the alarm (SECONDS) ends the program with SIGALRM.
 * Prints
 *   signal_unmap done libfabric_locks=L handled=H
 * L: mutexes libfabric took during the trapped munmap (0: the unmap path
 * never entered libfabric); H: signal handlers run. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int (*real_lock)(pthread_mutex_t*);
static volatile sig_atomic_t armed, handled;
static volatile long fabric_locks;

/* Whether the caller is libfabric's code. */
static int from_libfabric(void* ret) {
  Dl_info i;
  return dladdr(ret, &i) != 0 && i.dli_fname != NULL && strstr(i.dli_fname, "libfabric") != NULL;
}

int pthread_mutex_lock(pthread_mutex_t* m) {
  if (real_lock == NULL) real_lock = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  int rc = real_lock(m);
  if (armed && from_libfabric(__builtin_return_address(0))) {
    fabric_locks++;
    armed = 0;
    raise(SIGUSR1);                 /* with libfabric's mutex held */
  }
  return rc;
}

static void on_usr1(int sig) {
  (void)sig;
  void* p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) munmap(p, 4096);
  handled++;
}

int main(int argc, char** argv) {
  alarm(argc > 1 ? (unsigned)atoi(argv[1]) : 10);
  setenv("FI_PROVIDER", "tcp", 0);
  struct fi_info* info = NULL;
  struct fid_fabric* fabric = NULL;
  if (fi_getinfo(FI_VERSION(1, 13), NULL, NULL, 0, NULL, &info) != 0 || info == NULL ||
      fi_fabric(info->fabric_attr, &fabric, NULL) != 0) {
    fprintf(stderr, "fabric_signal_unmap: no tcp fabric\n");
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  char* p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 2;
  p[0] = 1;
  armed = 1;
  munmap(p, 1 << 20);
  armed = 0;
  printf("signal_unmap done libfabric_locks=%ld handled=%d\n", fabric_locks, (int)handled);
  fi_close(&fabric->fid);
  fi_freeinfo(info);
  return 0;
}
