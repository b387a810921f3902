/* env.c — start-up: options from the environment (read without
 * allocating), the owner table; messages written with
 * write(2); stats at exit. Runs on the first malloc, which may come before
 * any constructor (ld.so, libc start-up): nothing here allocates. */
#include "internal.h"
#include "ufd_monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

PA_HIDDEN pa_opts_t pa_opts;
PA_HIDDEN int pa_inited;
static _Atomic int init_state;

extern char** environ;

/* ---------------------------------------------------------------------------
   getenv without malloc: environ, or /proc/self/environ this early
--------------------------------------------------------------------------- */

static char proc_env[32768];
static size_t proc_env_len;

static const char* match(const char* entry, const char* name) {
  size_t k = strlen(name);
  return (strncmp(entry, name, k) == 0 && entry[k] == '=') ? entry + k + 1 : NULL;
}

PA_HIDDEN const char* pa_getenv(const char* name) {
  if (environ != NULL) {
    for (char** e = environ; *e != NULL; e++) { const char* v = match(*e, name); if (v) return v; }
    return NULL;
  }
  if (proc_env_len == 0) {
    int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    ssize_t n;
    while (proc_env_len < sizeof(proc_env) - 1 &&
           (n = read(fd, proc_env + proc_env_len, sizeof(proc_env) - 1 - proc_env_len)) > 0) proc_env_len += (size_t)n;
    close(fd);
    proc_env[proc_env_len] = 0;
  }
  for (size_t i = 0; i < proc_env_len; i += strlen(proc_env + i) + 1) {
    const char* v = match(proc_env + i, name);
    if (v) return v;
  }
  return NULL;
}

/* "4M", "2097152", "1G" */
static uint64_t parse_size(const char* s) {
  uint64_t v = 0;
  while (*s >= '0' && *s <= '9') v = v * 10 + (uint64_t)(*s++ - '0');
  switch (*s) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
  }
  return v;
}

static void copy_str(char* dst, size_t cap, const char* src) {
  size_t i = 0;
  for (; src[i] && i + 1 < cap; i++) dst[i] = src[i];
  dst[i] = 0;
}

static void read_options(void) {
  pa_opts.chunk_size = 4 * PA_MiB;
  const char* v = pa_getenv("PINARENA_CHUNK_SIZE");
  if (v) {
    uint64_t cs = parse_size(v);
    if (cs >= PA_CHUNK_MIN && cs <= (PA_MAX_SLICES * PA_SLICE) && (cs & (cs - 1)) == 0) pa_opts.chunk_size = cs;
    else pa_write_str(2, "pinarena: PINARENA_CHUNK_SIZE must be a power of two in [2M, 256M]; using 4M\n");
  }
  pa_opts.chunk_shift = (uint8_t)__builtin_ctzl(pa_opts.chunk_size);
  /* A chunk registered eagerly (or populated from the hugetlb pool) is
     pinned whole: a small program should not pay a whole default chunk, so
     the first regular chunk is the smallest one (2 MiB) unless a size was
     asked for explicitly. */
  pa_opts.chunk_first = v ? pa_opts.chunk_size : PA_CHUNK_MIN;

  pa_opts.registrar = PA_REGSEL_AUTO;
  v = pa_getenv("PINARENA_REGISTRAR");
  if (v) {
    if (!strcmp(v, "verbs")) pa_opts.registrar = PA_REGSEL_VERBS;
    else if (!strcmp(v, "io_uring")) pa_opts.registrar = PA_REGSEL_URING;
    else if (!strcmp(v, "mlock")) pa_opts.registrar = PA_REGSEL_MLOCK;
    else if (!strcmp(v, "none")) pa_opts.registrar = PA_REGSEL_NONE;
    else if (strcmp(v, "auto")) pa_write_str(2, "pinarena: PINARENA_REGISTRAR=auto|verbs|io_uring|mlock|none; using auto\n");
  }
  v = pa_getenv("PINARENA_IB_DEVICE");
  if (v) copy_str(pa_opts.ib_device, sizeof(pa_opts.ib_device), v);

  /* Pages (chunk.c says which backing serves which chunks): auto (default) maps lazily under the
     system's THP policy and asks for huge pages only where a chunk gets pinned; thp, 4k; hugetlb
     populates regular chunks from the pool up front (falling back to THP, then 4 KiB). */
  v = pa_getenv("PINARENA_PAGES");
  size_t n = 0;
  pa_opts.pages = PA_PAGES_AUTO;
  if (v != NULL && !strcmp(v, "hugetlb")) {
    pa_opts.pages = PA_PAGES_HUGETLB;
    pa_opts.prefs[n++] = PA_BACK_HUGETLB_2M; pa_opts.prefs[n++] = PA_BACK_THP; pa_opts.prefs[n++] = PA_BACK_4K;
  } else if (v != NULL && !strcmp(v, "thp")) {
    pa_opts.pages = PA_PAGES_THP;
  } else if (v != NULL && !strcmp(v, "4k")) {
    pa_opts.pages = PA_PAGES_4K;
  } else if (v != NULL && strcmp(v, "auto")) {
    pa_write_str(2, "pinarena: PINARENA_PAGES=auto|thp|4k|hugetlb; using auto\n");
  }
  pa_opts.nprefs = n;

  /* Registration: lazy (default) registers a chunk on the first pinarena_lookup into it; eager when
     it is mapped (README: the measured choice). */
  v = pa_getenv("PINARENA_REGISTER");
  pa_opts.reg_eager = 0;
  if (v != NULL && !strcmp(v, "eager")) pa_opts.reg_eager = 1;
  else if (v != NULL && strcmp(v, "lazy")) pa_write_str(2, "pinarena: PINARENA_REGISTER=lazy|eager; using lazy\n");

  v = pa_getenv("PINARENA_MAX_PINNED");
  if (v) pa_opts.max_pinned = parse_size(v);
  v = pa_getenv("PINARENA_STATS");
  if (v) copy_str(pa_opts.stats_path, sizeof(pa_opts.stats_path), v);
  v = pa_getenv("PINARENA_VERBOSE");
  pa_opts.verbose = (v != NULL && *v != '0');
}

/* Filled before the first allocation: class 1 for 0 (malloc(0) gets 16 bytes). */
PA_HIDDEN uint8_t pa_class_1k[1024 / 16 + 1] = { [0 ... 1024 / 16] = 1 };

/* The classes of internal.h (PA_NCLASS). */
static size_t class_of(size_t n) {
  if (n <= 128) return n == 0 ? 1 : (n + 15) >> 4;
  if (n <= 256) return 9 + ((n - 129) >> 5);
  return pa_class_above_256(n);
}
static void class_sizes(void) {
  for (size_t i = 0; i <= 1024 / 16; i++) pa_class_1k[i] = (uint8_t)class_of(i * 16);
  for (size_t c = 1; c < PA_NCLASS; c++) {
    if (c <= 8) { pa_class_size[c] = (uint32_t)(c * 16); continue; }
    if (c <= 12) { pa_class_size[c] = (uint32_t)(128 + (c - 8) * 32); continue; }
    size_t b = 8 + (c - 13) / 8, m = (c - 13) % 8;
    pa_class_size[c] = (uint32_t)(((size_t)1 << b) + ((m + 1) << (b - 3)));
  }
}

PA_HIDDEN PA_COLD void pa_init_slow(void) {
  int expect = 0;
  if (!atomic_compare_exchange_strong(&init_state, &expect, 1)) {
    while (atomic_load(&init_state) != 2) sched_yield();      /* another thread is initialising */
    return;
  }
  int saved = errno;
  class_sizes();
  read_options();
  pa_free_mark_init();
  size_t tlen = (size_t)1 << (PA_ADDR_BITS - PA_TABLE_SHIFT);   /* 64 MiB of address space, touched sparsely */
  void* t = mmap(NULL, tlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (t == MAP_FAILED) { pa_write_str(2, "pinarena: cannot map the owner table\n"); abort(); }
  pa_table = (_Atomic(uint8_t)*)t;
  t = mmap(NULL, tlen * sizeof(uintptr_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (t == MAP_FAILED) { pa_write_str(2, "pinarena: cannot map the span table\n"); abort(); }
  pa_span_table = (_Atomic(uintptr_t)*)t;
  errno = saved;
  pa_inited = 1;
  atomic_store(&init_state, 2);
  pa_atfork_install();             /* may allocate: we are initialised by now */
  errno = saved;
}

/* ---------------------------------------------------------------------------
   Messages (write(2) only)
--------------------------------------------------------------------------- */

PA_HIDDEN void pa_write_str(int fd, const char* s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w <= 0) { if (w < 0 && errno == EINTR) continue; return; }
    s += w; n -= (size_t)w;
  }
}

PA_HIDDEN char* pa_fmt_hex(char* buf, uintptr_t v) {
  char tmp[16];
  int n = 0;
  do { tmp[n++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
  char* p = buf;
  *p++ = '0'; *p++ = 'x';
  while (n) *p++ = tmp[--n];
  *p = 0;
  return buf;
}

PA_HIDDEN char* pa_fmt_u64(char* buf, uint64_t v) {
  char tmp[20];
  int n = 0;
  do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
  char* p = buf;
  while (n) *p++ = tmp[--n];
  *p = 0;
  return buf;
}

PA_HIDDEN void pa_fatal_ptr(const char* what, const void* p) {
  char h[24];
  int saved = errno;
  pa_write_str(2, "pinarena: ");
  pa_write_str(2, what);
  pa_write_str(2, " ");
  pa_write_str(2, pa_fmt_hex(h, (uintptr_t)p));
  pa_write_str(2, "\n");
  errno = saved;
  abort();
}

/* ---------------------------------------------------------------------------
   Stats
--------------------------------------------------------------------------- */

static char* put(char* p, const char* s) { while (*s) *p++ = *s++; return p; }
static char* put_kv(char* p, const char* k, uint64_t v) {
  char n[24];
  p = put(p, " "); p = put(p, k); p = put(p, "="); return put(p, pa_fmt_u64(n, v));
}

PA_HIDDEN void pa_write_stats(int fd) {
  char line[1024];
  char exe[256];
  ssize_t en = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[en > 0 ? en : 0] = 0;
  uint64_t mallocs, frees, remote;
  pa_small_counts(&mallocs, &frees, &remote);
  char* p = put(line, "pinarena:");
  p = put_kv(p, "pid", (uint64_t)getpid());
  p = put(p, " exe="); p = put(p, exe);
  p = put(p, " registrar="); p = put(p, pa_registrar_name());
  p = put_kv(p, "small_mallocs", mallocs);
  p = put_kv(p, "small_frees", frees);
  p = put_kv(p, "remote_frees", remote);
  p = put_kv(p, "large_allocs", atomic_load(&pa_gstats.large_allocs));
  p = put_kv(p, "huge_allocs", atomic_load(&pa_gstats.huge_allocs));
  p = put_kv(p, "chunks", atomic_load(&pa_gstats.chunks));
  p = put_kv(p, "chunk_bytes", atomic_load(&pa_gstats.chunk_bytes));
  p = put_kv(p, "huge_chunks", atomic_load(&pa_gstats.huge_chunks));
  p = put_kv(p, "huge_bytes", atomic_load(&pa_gstats.huge_bytes));
  p = put_kv(p, "registered_chunks", atomic_load(&pa_gstats.reg_chunks));
  p = put_kv(p, "registered_bytes", atomic_load(&pa_gstats.reg_bytes));
  p = put_kv(p, "unregistered_chunks", atomic_load(&pa_gstats.unreg_chunks));
  p = put_kv(p, "unregistered_bytes", atomic_load(&pa_gstats.unreg_bytes));
  p = put_kv(p, "released_bytes", atomic_load(&pa_gstats.released_bytes));
  p = put(p, "\n");
  *p = 0;
  pa_write_str(fd, line);
}

/* The userfaultfd monitor (ufd_monitor.h) only on request, and only from the
 * constructor: starting it creates a thread, which allocates, so never from
 * inside malloc. The memory hooks need nothing: they work before this runs. */
static void uffd_start(void) {
  const char* v = pa_getenv("PINARENA_UFFD");
  if (v == NULL || strcmp(v, "1") != 0) return;
  int rc = pa_ufd_start();
  if (rc == 0) { if (pa_opts.verbose) pa_write_str(2, "pinarena: userfaultfd monitor started\n"); return; }
  char n[24];
  pa_write_str(2, "pinarena: PINARENA_UFFD=1 but userfaultfd is unavailable (errno ");
  pa_write_str(2, pa_fmt_u64(n, (uint64_t)-rc));
  pa_write_str(2, rc == -EPERM ? ": see vm.unprivileged_userfaultfd); hooks only\n" : "); hooks only\n");
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
    int fd = open(pa_opts.stats_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) { pa_write_stats(fd); close(fd); }
  }
  errno = saved;
}
