/* init.c — process start-up: the first malloc (or the constructor, whichever
 * comes first) reads the options, fills the class tables, makes the free-mark
 * secret and maps the owner tables; the constructor then lets registration
 * start (dlopen is safe from there on) and the destructor writes the stats.
 * Nothing before pa_inited allocates. */
#include "internal.h"
#include "../nocancel.h"
#include "ufd_monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

PA_HIDDEN int pa_inited;
static _Atomic int init_state;

PA_HIDDEN PA_COLD void pa_init_slow(void) {
  int expect = 0;
  if (!atomic_compare_exchange_strong(&init_state, &expect, 1)) {
    while (atomic_load(&init_state) != 2) sched_yield();      /* another thread is initialising */
    return;
  }
  int saved = errno;
  pa_stderr_remember();
  pa_classes_init();
  pa_read_options();
  pa_free_mark_init();
  size_t tlen = (size_t)1 << (PA_ADDR_BITS - PA_TABLE_SHIFT);   /* 64 MiB of address space, touched sparsely */
  void* t = mmap(NULL, tlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (t == MAP_FAILED) { pa_write_str(2, "pinarena: cannot map the owner table\n"); abort(); }
  pa_os_refuse_huge(t, tlen);
  pa_table = (_Atomic(uint8_t)*)t;
  /* The span table (free's fast path) takes 512 MiB of address space: only
     when the address space is not limited. Under RLIMIT_AS a program that
     runs with glibc must run with us, so free takes the owner table's way
     (pa_free_fast_mask sends every pointer there; about 9 % on the churn
     benchmark, README). */
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur == RLIM_INFINITY) {
    t = mmap(NULL, tlen * sizeof(uintptr_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t != MAP_FAILED) {
      pa_os_refuse_huge(t, tlen * sizeof(uintptr_t));
      pa_span_table = (_Atomic(uintptr_t)*)t;
    }
  }
  if (pa_span_table == NULL) {
    static _Atomic(uintptr_t) no_span_table[1];      /* free reads entry 0 for NULL only */
    pa_span_table = no_span_table;
    pa_free_fast_mask = ~(uintptr_t)0;
  }
  errno = saved;
  pa_inited = 1;
  atomic_store(&init_state, 2);
  pa_atfork_install();             /* may allocate: we are initialised by now */
  errno = saved;
}

/* The userfaultfd monitor (ufd_monitor.h) only on request, and only from the
 * constructor: starting it creates a thread, which allocates, so never from
 * inside malloc. The memory hooks need nothing: they work before this runs. */
static void uffd_start(void) {
  const char* v = pa_getenv("PINARENA_UFFD");
  if (v == NULL || strcmp(v, "1") != 0) return;
  int rc = pa_ufd_start();
  if (rc == 0) { pa_notice("userfaultfd monitor started", NULL); return; }
  char n[24];
  pa_warn("PINARENA_UFFD=1 but userfaultfd is unavailable (errno ", pa_fmt_u64(n, (uint64_t)-rc),
          rc == -EPERM ? ": see vm.unprivileged_userfaultfd); hooks only" : "); hooks only", NULL);
}

__attribute__((constructor)) static void pa_ctor(void) {
  pa_ensure_init();
  pa_register_ready();             /* dlopen (verbs) is safe from here on */
  uffd_start();
}

__attribute__((destructor)) static void pa_dtor(void) {
  if (pa_opts.stats_path[0] == 0) return;
  int saved = errno;
  if (!strcmp(pa_opts.stats_path, "stderr")) pa_write_stats(2);
  else {
    int fd = pa_nc_open_mode(pa_opts.stats_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) { pa_write_stats(fd); pa_nc_close(fd); }
  }
  errno = saved;
}
