/* options.c — the PINARENA_* environment, read without allocating: the
 * first malloc may come before any constructor (ld.so, libc start-up), when
 * environ may not be set yet (then /proc/self/environ is read into a static
 * buffer). */
#include "internal.h"
#include "../nocancel.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

PA_HIDDEN pa_opts_t pa_opts;

extern char** environ;

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
    int fd = pa_nc_open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    ssize_t n;
    while (proc_env_len < sizeof(proc_env) - 1 &&
           (n = pa_nc_read(fd, proc_env + proc_env_len, sizeof(proc_env) - 1 - proc_env_len)) > 0) proc_env_len += (size_t)n;
    pa_nc_close(fd);
    proc_env[proc_env_len] = 0;
  }
  for (size_t i = 0; i < proc_env_len; i += strlen(proc_env + i) + 1) {
    const char* v = match(proc_env + i, name);
    if (v) return v;
  }
  return NULL;
}

/* A size: a decimal number of bytes, or a number (with a fraction if wanted)
 * and a unit K, M, G or T (powers of 1024, either case, optionally followed
 * by "B" or "iB"): "2097152", "512M", "0.5G", "1T", "4MiB". Returns 0 and the
 * bytes (a fraction of a byte rounded down), or -1 for anything else
 * (nothing, a sign, a second dot, another unit, trailing characters,
 * overflow). */
static int parse_size(const char* s, uint64_t* out) {
  uint64_t whole = 0, frac = 0, scale = 1;
  const char* p = s;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; p++)
    if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole)) return -1;
  if (*p == '.') {
    p++;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++)
      if (scale < 1000000000000ULL) { frac = frac * 10 + (uint64_t)(*p - '0'); scale *= 10; }   /* 12 digits are plenty */
  }
  unsigned shift = 0;
  switch (*p) {
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    case 't': case 'T': shift = 40; p++; break;
    default: break;
  }
  if (shift != 0 && p[0] == 'i' && p[1] == 'B') p += 2;
  else if (shift != 0 && p[0] == 'B') p++;
  if (*p != 0) return -1;
  if (shift == 0 && scale != 1) return -1;              /* "1.5" bytes */
  uint64_t v;
  if (whole > (UINT64_MAX >> shift)) return -1;
  v = whole << shift;
  /* frac / scale of a unit: (frac << shift) / scale, without overflow (frac < 10^12 < 2^40, shift <= 40) */
  unsigned __int128 f = ((unsigned __int128)frac << shift) / scale;
  if (__builtin_add_overflow(v, (uint64_t)f, &v)) return -1;
  *out = v;
  return 0;
}

static void copy_str(char* dst, size_t cap, const char* src) {
  size_t i = 0;
  for (; src[i] && i + 1 < cap; i++) dst[i] = src[i];
  dst[i] = 0;
}

PA_HIDDEN void pa_read_options(void) {
  pa_opts.chunk_size = 4 * PA_MiB;
  const char* v = pa_getenv("PINARENA_CHUNK_SIZE");
  if (v) {
    uint64_t cs = 0;
    if (parse_size(v, &cs) == 0 && cs >= PA_CHUNK_MIN && cs <= (PA_MAX_SLICES * PA_SLICE) && (cs & (cs - 1)) == 0)
      pa_opts.chunk_size = cs;
    else pa_warn("PINARENA_CHUNK_SIZE=", v, " is not a power of two in [2M, 256M]; 4M assumed", NULL);
  }
  pa_opts.chunk_shift = (uint8_t)__builtin_ctzl(pa_opts.chunk_size);
  /* A chunk registered eagerly (or populated from the hugetlb pool) is
     pinned whole: a small program should not pay a whole default chunk, so
     the first regular chunk is the smallest one (2 MiB) unless a size was
     asked for explicitly. */
  pa_opts.chunk_first = v ? pa_opts.chunk_size : PA_CHUNK_MIN;
  pa_opts.chunk_grow = v == NULL;     /* an explicit size is every regular chunk's */

  pa_opts.registrar = PA_REGSEL_AUTO;
  v = pa_getenv("PINARENA_REGISTRAR");
  if (v) {
    if (!strcmp(v, "verbs")) pa_opts.registrar = PA_REGSEL_VERBS;
    else if (!strcmp(v, "io_uring")) pa_opts.registrar = PA_REGSEL_URING;
    else if (!strcmp(v, "mlock")) pa_opts.registrar = PA_REGSEL_MLOCK;
    else if (!strcmp(v, "none")) pa_opts.registrar = PA_REGSEL_NONE;
    else if (strcmp(v, "auto")) pa_warn("PINARENA_REGISTRAR=", v, " is not auto, verbs, io_uring, mlock or none; auto assumed", NULL);
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
    pa_warn("PINARENA_PAGES=", v, " is not auto, thp, 4k or hugetlb; auto assumed", NULL);
  }
  pa_opts.nprefs = n;

  /* Registration: lazy (default) registers a chunk on the first pinarena_lookup into it; eager when
     it is mapped (bindings-c/README.md: the measured choice). */
  /* PINARENA_RECLAIM: freed memory the shim never registered serves other kinds (reclaim.c). Unset: only
     while no library that registers memory itself (an MPI, UCX, libfabric, the program's libibverbs) is
     loaded; 1: always; 0: never (every touched page kept until pinarena_trim) */
  v = pa_getenv("PINARENA_RECLAIM");
  pa_opts.reclaim = v == NULL || v[0] == 0 ? 1 : (v[0] == '0' && v[1] == 0) ? 0 : (v[0] == '1' && v[1] == 0) ? 2 : 1;
  if (v != NULL && strcmp(v, "0") && strcmp(v, "1")) pa_warn("PINARENA_RECLAIM=", v, " is not 0 or 1; 1 assumed", NULL);
  /* PINARENA_STACK_EVENTS=0: the shim feeds neither UCX nor libfabric (their own hooks, as configured) */
  v = pa_getenv("PINARENA_STACK_EVENTS");
  pa_opts.stack_events_off = v != NULL && strcmp(v, "0") == 0;
  v = pa_getenv("PINARENA_REGISTER");
  pa_opts.reg_eager = 0;
  if (v != NULL && !strcmp(v, "eager")) pa_opts.reg_eager = 1;
  else if (v != NULL && strcmp(v, "lazy")) pa_warn("PINARENA_REGISTER=", v, " is not lazy or eager; lazy assumed", NULL);

  v = pa_getenv("PINARENA_MAX_PINNED");
  if (v && (parse_size(v, &pa_opts.max_pinned) != 0 || pa_opts.max_pinned == 0)) {
    pa_opts.max_pinned = 0;
    pa_warn("PINARENA_MAX_PINNED=", v, " is not a size (bytes, or a number with K, M, G or T: 512M, 0.5G, 1T); "
            "no cap assumed", NULL);
  }
  v = pa_getenv("PINARENA_STATS");
  if (v) copy_str(pa_opts.stats_path, sizeof(pa_opts.stats_path), v);
  v = pa_getenv("PINARENA_VERBOSE");
  pa_opts.verbose = (v != NULL && *v != '0');
}
