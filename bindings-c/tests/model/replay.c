/* replay.c — see replay.h. Every sequence starts with no live block and ends
 * with every block freed and a trim; a helper thread runs the 'h' allocations
 * and 'x' frees (cross-thread frees into the owner's heap). */
#define _GNU_SOURCE
#include "replay.h"
#include "pinarena.h"
#include "pagemap.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS     16           /* RuleModel.SLOTS */
#define MIN_ALIGN 16           /* RuleModel.MIN_ALIGN */
#define PAGE      4096u
#define MAX_PAGES 4096         /* RuleModel.MAX_PAGES */
#define MAX_KEYS  1024
#define MAX_RELEASES 1024

enum { EMPTY, LIVE, FREED };

typedef struct {
  int state, remote, ro;
  unsigned char* p;
  size_t size, usable;
  uint64_t seed;
} slot_t;

typedef struct { uintptr_t page; uint64_t frame; } frame_t;
typedef struct { uintptr_t base; size_t len; uint32_t key; } key_t_;
typedef struct { uintptr_t base; size_t len; } range_t;

static slot_t slots[SLOTS];
static frame_t frames[MAX_PAGES];
static int nframes;
static key_t_ keys[MAX_KEYS];
static int nkeys;
/* Release callbacks land here (from inside trim or realloc: no allocation). */
static range_t releases[MAX_RELEASES];
static _Atomic int nreleases, release_allowed, release_outside;
static int pagemap_fd = -1;
static char* errbuf;
static size_t errcap;
static int op_index;
static const char* op_token;

/* Where the replay is now, for a fatal signal's report (main.c). */
volatile int pa_model_op_index, pa_model_line;

__attribute__((format(printf, 2, 3)))
static int fail(const char* rule, const char* fmt, ...) {
  int n = snprintf(errbuf, errcap, "op #%d '%s': rule '%s': ", op_index, op_token ? op_token : "end", rule);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < errcap) vsnprintf(errbuf + n, errcap - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static unsigned char pattern(uint64_t seed, uint64_t off) {   /* RuleModel.pattern */
  return (unsigned char)(((seed + 1) * 0x9E3779B97F4A7C15ull + off * 0xBF58476D1CE4E5B9ull) >> 56);
}

/* RuleModel.forEachCheckedOffset: every byte up to 512, else head, tail and 64 samples. */
#define FOR_CHECKED(size, off, body) do { \
    size_t _n = (size); \
    if (_n <= 512) { for (size_t off = 0; off < _n; off++) { body; } } \
    else { \
      for (size_t _i = 0; _i < 64; _i++) { size_t off = _i; body; } \
      for (size_t _i = 0; _i < 64; _i++) { size_t off = _n - 64 + _i; body; } \
      size_t _s = _n / 64 > 64 ? _n / 64 : 64; \
      for (size_t off = 64; off < _n - 64; off += _s) { body; } \
    } } while (0)

static void write_pattern(slot_t* s, size_t from) {
  FOR_CHECKED(s->size, off, if (off >= from) s->p[off] = pattern(s->seed, off));
}

/* The offsets written for a block of `sampled` bytes, those below `limit` (a realloc's shrink). */
static int verify_below(int id, size_t sampled, size_t limit, const char* when) {
  slot_t* s = &slots[id];
  FOR_CHECKED(sampled, off,
    if (off < limit && s->p[off] != pattern(s->seed, off))
      return fail("contents", "slot %d %p+%zu %s: byte %u at offset %zu, written %u", id, (void*)s->p, s->size, when,
                  s->p[off], off, pattern(s->seed, off)));
  return 0;
}

static int verify(int id, const char* when) { return verify_below(id, slots[id].size, slots[id].size, when); }

/* ---- the helper thread: 'h' allocations and 'x' frees ---------------------------------------- */
typedef struct { int kind; size_t size, align; int remote; void* p; int rc; int err; } job_t;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cond = PTHREAD_COND_INITIALIZER;
static job_t* job;
static int job_done;
static pthread_t helper;
static int helper_started;

static void run_job(job_t* j) {
  errno = 0;
  if (j->kind == 'a') {
    if (j->remote) j->p = pinarena_alloc_remote(j->size, PINARENA_REMOTE_READ | PINARENA_REMOTE_WRITE);
    else if (j->align) { j->rc = posix_memalign(&j->p, j->align, j->size); if (j->rc) j->p = NULL; }
    else j->p = malloc(j->size);
  } else {
    if (j->remote) j->rc = pinarena_free_remote(j->p);
    else free(j->p);
  }
  j->err = errno;
}

static void* helper_main(void* arg) {
  (void)arg;
  pthread_mutex_lock(&job_lock);
  for (;;) {
    while (job == NULL || job_done) pthread_cond_wait(&job_cond, &job_lock);
    run_job(job);
    job_done = 1;
    pthread_cond_broadcast(&job_cond);
  }
  return NULL;
}

static void on_helper(job_t* j) {
  if (!helper_started) {
    if (pthread_create(&helper, NULL, helper_main, NULL) != 0) { run_job(j); return; }
    helper_started = 1;
  }
  pthread_mutex_lock(&job_lock);
  job = j;
  job_done = 0;
  pthread_cond_broadcast(&job_cond);
  while (!job_done) pthread_cond_wait(&job_cond, &job_lock);
  job = NULL;
  pthread_mutex_unlock(&job_lock);
}

/* ---- frames, keys, releases ------------------------------------------------------------------- */
static long frame_now(uintptr_t page) {
  uint64_t pfn = 0;
  int rc = pa_pagemap_pfn(pagemap_fd, (void*)page, &pfn);
  return rc == 0 ? (long)pfn : -1;
}

static int observe(uintptr_t page, const char* when) {
  long now = frame_now(page);
  for (int i = 0; i < nframes; i++)
    if (frames[i].page == page) {
      if ((long)frames[i].frame != now)
        return fail("frames", "page %#lx was frame %#lx, is %s%#lx %s with no release", (unsigned long)page,
                    (unsigned long)frames[i].frame, now < 0 ? "not present " : "", now < 0 ? 0ul : (unsigned long)now, when);
      return 0;
    }
  if (now >= 0 && nframes < MAX_PAGES) frames[nframes++] = (frame_t){page, (uint64_t)now};
  return 0;
}

static int observe_all(const char* when) {
  for (int i = 0; i < nframes; i++) if (observe(frames[i].page, when)) return -1;
  return 0;
}

static void on_release(void* base, size_t len, void* arg) {
  (void)arg;
  if (!release_allowed) release_outside = 1;
  int n = nreleases;
  if (n < MAX_RELEASES) { releases[n] = (range_t){(uintptr_t)base, len}; nreleases = n + 1; }
}

/* Rule release: each released range holds no live block; its frames and keys are forgotten. */
static int take_releases(void) {
  if (release_outside) return fail("release", "the release callback ran outside trim and realloc");
  if (nreleases >= MAX_RELEASES) return fail("release", "more than %d releases in one operation", MAX_RELEASES);
  for (int r = 0; r < nreleases; r++) {
    uintptr_t b = releases[r].base, e = b + releases[r].len;
    for (int id = 0; id < SLOTS; id++) {
      slot_t* s = &slots[id];
      if (s->state == LIVE && (uintptr_t)s->p < e && b < (uintptr_t)s->p + s->size)
        return fail("release", "%#lx+%zu released under live slot %d at %p+%zu", (unsigned long)b, releases[r].len, id,
                    (void*)s->p, s->size);
    }
    for (int i = 0; i < nframes; ) {
      if (frames[i].page >= b && frames[i].page < e) frames[i] = frames[--nframes]; else i++;
    }
    for (int i = 0; i < nkeys; ) {
      if (keys[i].base >= b && keys[i].base < e) keys[i] = keys[--nkeys]; else i++;
    }
  }
  nreleases = 0;
  return 0;
}

/* ---- rules unique and disjoint ---------------------------------------------------------------- */
static int placed(int id, unsigned char* p, size_t size, size_t align) {
  slot_t* s = &slots[id];
  size_t want = align > MIN_ALIGN ? align : MIN_ALIGN;
  if (p == NULL) return fail("disjoint", "allocation of %zu bytes failed: %s", size, strerror(errno));
  if ((uintptr_t)p & (want - 1)) return fail("disjoint", "%p is not aligned to %zu", (void*)p, want);
  size_t usable = s->remote ? size : malloc_usable_size(p);
  if (usable < size) return fail("disjoint", "%p usable %zu < asked %zu", (void*)p, usable, size);
  for (int o = 0; o < SLOTS; o++) {
    slot_t* l = &slots[o];
    if (o == id || l->state != LIVE) continue;
    if (l->p == p) return fail("unique", "%p handed out again while slot %d holds it", (void*)p, o);
    if (p < l->p + l->usable && l->p < p + usable)
      return fail("disjoint", "%p+%zu overlaps slot %d at %p+%zu", (void*)p, usable, o, (void*)l->p, l->usable);
  }
  s->p = p;
  s->usable = usable;
  return 0;
}

/* ---- operations ------------------------------------------------------------------------------- */
static int op_alloc(int id, size_t size, size_t align, int remote, int on_helper_thread, uint64_t seed) {
  slot_t* s = &slots[id];
  job_t j = {.kind = 'a', .size = size, .align = align, .remote = remote};
  if (on_helper_thread) on_helper(&j); else run_job(&j);
  errno = j.err;
  s->remote = remote;
  s->ro = 0;
  if (placed(id, j.p, size, remote ? 256 : align)) return -1;
  s->state = LIVE;
  s->size = size;
  s->seed = seed;
  if (remote) FOR_CHECKED(size, off, if (s->p[off]) return fail("contents", "remote block %p not zero at %zu", (void*)s->p, off));
  write_pattern(s, 0);
  return 0;
}

static int op_free(int id, int on_helper_thread) {
  slot_t* s = &slots[id];
  if (verify(id, "before its free")) return -1;
  job_t j = {.kind = 'f', .remote = s->remote, .p = s->p};
  if (on_helper_thread) on_helper(&j); else run_job(&j);
  if (s->remote && j.rc != 0) return fail("keys", "pinarena_free_remote(%p) = %d", (void*)s->p, j.rc);
  s->state = FREED;
  return 0;
}

static int op_lookup(int id) {
  slot_t* s = &slots[id];
  if (verify(id, "at its lookup")) return -1;
  pinarena_region_t r;
  int rc = pinarena_lookup(s->p, s->size, &r);
  const char* reg = pinarena_registrar();
  if (rc == -ENODATA) {
    /* no keys: allowed for a remote buffer without verbs, or heap memory with no registrar */
    if (s->remote ? strcmp(pinarena_remote_keys(), "none") != 0 && strcmp(reg, "verbs") == 0
                  : strcmp(reg, "none") != 0 && strcmp(reg, "mlock") != 0)
      return fail("keys", "lookup of slot %d: -ENODATA with registrar %s", id, reg);
    return 0;
  }
  if (rc != 0) return fail("keys", "lookup of slot %d %p+%zu: %d", id, (void*)s->p, s->size, rc);
  if (!r.registered) return fail("keys", "lookup returned 0 but registered = 0");
  uintptr_t b = (uintptr_t)r.base;
  if (b > (uintptr_t)s->p || (uintptr_t)s->p + s->size > b + r.length)
    return fail("keys", "registration %p+%zu does not cover slot %d at %p+%zu", r.base, r.length, id, (void*)s->p, s->size);
  if (s->remote && (b != (uintptr_t)s->p || r.length != s->size) && strcmp(pinarena_remote_keys(), "chunk") != 0)
    return fail("keys", "remote key of %p+%zu reaches %p+%zu", (void*)s->p, s->size, r.base, r.length);
  if (!s->remote) {
    int i;
    for (i = 0; i < nkeys && keys[i].base != b; i++) ;
    /* replaced only by a longer registration (a huge object grown in place gets a second record) */
    if (i < nkeys && keys[i].key != r.lkey && r.length <= keys[i].len)
      return fail("keys", "registration at %p+%zu had key %u, now %u over %zu with no release", r.base, keys[i].len,
                  keys[i].key, r.lkey, r.length);
    if (i < nkeys) keys[i] = (key_t_){b, r.length, r.lkey};
    else if (nkeys < MAX_KEYS) keys[nkeys++] = (key_t_){b, r.length, r.lkey};
    if (observe((uintptr_t)s->p & ~(uintptr_t)(PAGE - 1), "at its lookup") ||
        observe(((uintptr_t)s->p + s->size - 1) & ~(uintptr_t)(PAGE - 1), "at its lookup")) return -1;
  }
  return 0;
}

static int op_realloc(int id, size_t size) {
  slot_t* s = &slots[id];
  if (verify(id, "before its realloc")) return -1;
  release_allowed = 1;
  unsigned char* q = realloc(s->p, size);
  release_allowed = 0;
  if (q == NULL) return fail("contents", "realloc(%p, %zu) failed: %s", (void*)s->p, size, strerror(errno));
  size_t old = s->size;
  s->state = FREED;                     /* the old block is gone: it must not count as overlapping */
  if (placed(id, q, size, 0)) return -1;
  s->state = LIVE;
  if (verify_below(id, old, size, "after its realloc")) return -1;
  s->size = size;
  write_pattern(s, 0);                  /* the bytes sampled at the new size (the kept ones are unchanged) */
  return take_releases();
}

/* The whole pages inside a block from its byte `skip` on. */
static void interior(slot_t* s, size_t skip, uintptr_t* b, uintptr_t* e) {
  *b = ((uintptr_t)s->p + skip + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
  *e = ((uintptr_t)s->p + s->size) & ~(uintptr_t)(PAGE - 1);
}

static int op_madvise(int id) {
  slot_t* s = &slots[id];
  uintptr_t b, e;
  interior(s, 0, &b, &e);
  if (b >= e) return 0;
  if (madvise((void*)b, e - b, MADV_DONTNEED) != 0)
    return fail("contents", "madvise(DONTNEED) of %p's pages: %s", (void*)s->p, strerror(errno));
  FOR_CHECKED(s->size, off,
    if ((uintptr_t)s->p + off >= b && (uintptr_t)s->p + off < e && s->p[off] != 0)
      return fail("contents", "byte %zu of %p after DONTNEED is %u, not 0", off, (void*)s->p, s->p[off]));
  write_pattern(s, 0);
  return observe_all("after madvise");
}

static int op_mprotect(int id) {
  slot_t* s = &slots[id];
  /* Looked up first: the chunk's registration (lazy, at the first lookup) pins with write access, which a
     read-only page anywhere in the chunk makes fail (-ENODATA for every block of it while the page stays
     read-only): a program takes its keys before it write-protects pages. */
  if (op_lookup(id)) return -1;
  uintptr_t b, e;
  /* Not the block's first bytes: free links a block through them, under glibc (tcache) as under the shim,
     so a program must give write access back there before free. */
  interior(s, 64, &b, &e);
  if (b >= e) return 0;
  if (mprotect((void*)b, e - b, PROT_READ) != 0)
    return fail("contents", "mprotect(PROT_READ) of %p's pages: %s", (void*)s->p, strerror(errno));
  s->ro = 1;
  return 0;
}

static int op_trim(void) {
  release_allowed = 1;
  pinarena_trim();
  release_allowed = 0;
  if (take_releases()) return -1;
  return observe_all("after trim");
}

/* A forked child ends by its own signals, not through the replay program's report of them. */
static void child_signals_default(void) {
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
}

/* The parent after a fork. With io_uring the shim suspends its registrations across fork and pins them
   again in the parent, into the same slots: the keys stay, but pages the child still shares copy-on-write
   move to new frames when they are pinned again, as FORK.md documents ("The parent does not keep its
   frames under io_uring"; 17 of 18 runs of 'a0:100 k0 t F' with this check). Frames are checked across
   fork only for other registrars; the keys are checked at the next lookup as always. */
static int after_fork(void) {
  if (strcmp(pinarena_registrar(), "io_uring") == 0) { nframes = 0; return 0; }
  return observe_all("in the parent after fork");
}

static int op_fork(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return fail("contents", "fork: %s", strerror(errno));
  if (pid == 0) {
    child_signals_default();
    for (int id = 0; id < SLOTS; id++)
      if (slots[id].state == LIVE && verify(id, "in the forked child")) { fprintf(stderr, "%s\n", errbuf); _exit(1); }
    static const size_t sizes[] = {1, 100, 5000, 100000, 3u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
      unsigned char* p = malloc(sizes[i]);
      if (p == NULL) _exit(2);
      memset(p, 0x5a, sizes[i]);
      free(p);
    }
    _exit(0);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid) return fail("contents", "waitpid: %s", strerror(errno));
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return fail("contents", "the forked child ended with %s %d", WIFSIGNALED(st) ? "signal" : "status",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  return after_fork();
}

/* Rule double free, C's form: the shim catches a double free at the free, at the span's release or when
   malloc reaches the second copy (README), so it runs in a forked child that then allocates every live
   block's size twice: an abort is a catch; a live block handed out again is the rule broken. */
static int op_double_free(int id) {
  slot_t* s = &slots[id];
  for (int o = 0; o < SLOTS; o++)
    if (slots[o].state == LIVE && s->p >= slots[o].p && s->p < slots[o].p + slots[o].usable) return 0;  /* reused */
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return fail("double free", "fork: %s", strerror(errno));
  if (pid == 0) {
    child_signals_default();
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);                 /* the abort's message is expected */
    if (s->remote) pinarena_free_remote(s->p); else free(s->p);
    for (int round = 0; round < 2; round++)
      for (int o = 0; o < SLOTS; o++) {
        if (slots[o].state != LIVE) continue;
        unsigned char* q = malloc(slots[o].size);
        for (int l = 0; q != NULL && l < SLOTS; l++)
          if (slots[l].state == LIVE && q < slots[l].p + slots[l].usable && slots[l].p < q + slots[o].size) _exit(3);
      }
    _exit(0);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid) return fail("double free", "waitpid: %s", strerror(errno));
  if ((WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) || (WIFEXITED(st) && WEXITSTATUS(st) == 0)) return after_fork();
  if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
    return fail("double free", "after a second free of %p a live block was handed out again", (void*)s->p);
  return fail("double free", "the child freeing %p twice ended with %s %d", (void*)s->p,
              WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* ---- parsing ---------------------------------------------------------------------------------- */
static int parse_num(const char** q, uint64_t* v) {
  char* end;
  if (**q < '0' || **q > '9') return -1;
  errno = 0;
  *v = strtoull(*q, &end, 10);
  if (errno) return -1;
  *q = end;
  return 0;
}

static int step(const char* tok, size_t len, uint64_t index) {
  char t[64];
  if (len >= sizeof t) return fail("input", "token too long");
  memcpy(t, tok, len);
  t[len] = 0;
  op_token = t;
  const char* q = t + 1;
  char kind = t[0];
  if (kind == 't' || kind == 'F') {
    if (*q) return fail("input", "'%c' takes no slot", kind);
    return kind == 't' ? op_trim() : op_fork();
  }
  uint64_t id, size = 0, align = 0;
  int remote = 0, helper_flag = 0;
  if (parse_num(&q, &id) || id >= SLOTS) return fail("input", "bad slot (0..%d)", SLOTS - 1);
  if (kind == 'a' || kind == 'z') {
    if (*q++ != ':' || parse_num(&q, &size) || size == 0) return fail("input", "expected %c<slot>:<size>", kind);
    if (kind == 'a' && *q == '@') {
      q++;
      if (parse_num(&q, &align) || align == 0 || (align & (align - 1))) return fail("input", "bad alignment");
      if (align < sizeof(void*)) align = sizeof(void*);
    }
    for (; kind == 'a' && *q; q++) {
      if (*q == 'r') remote = 1;
      else if (*q == 'h') helper_flag = 1;
      else break;
    }
  }
  if (*q) return fail("input", "trailing '%s'", q);
  slot_t* s = &slots[id];
  switch (kind) {
    case 'a':
      if (s->state == LIVE) return fail("input", "slot %d is live", (int)id);
      return op_alloc((int)id, size, align, remote, helper_flag, index);
    case 'f': case 'x': case 'k': case 'z': case 'm': case 'p':
      if (s->state != LIVE) return fail("input", "slot %d is not live", (int)id);
      if (kind == 'f' || kind == 'x') return op_free((int)id, kind == 'x');
      if (kind == 'k') return op_lookup((int)id);
      if (s->remote || s->ro) return fail("input", "slot %d is remote or read-only", (int)id);
      if (kind == 'p' && s->size <= (256u << 10))      /* RuleModel.SHIM_SMALL_MAX: small pages are shared */
        return fail("input", "mprotect of a small block (%zu bytes): its page stays read-only for the next owner", s->size);
      if (kind == 'z') return op_realloc((int)id, size);
      return kind == 'm' ? op_madvise((int)id) : op_mprotect((int)id);
    case 'd':
      if (s->state != FREED) return fail("input", "slot %d was not freed", (int)id);
      return op_double_free((int)id);
    default:
      return fail("input", "unknown operation '%c'", kind);
  }
}

int pa_model_replay(const char* line, char* err, size_t errlen) {
  errbuf = err;
  errcap = errlen;
  err[0] = 0;
  if (pagemap_fd < 0) {
    pagemap_fd = pa_pagemap_open();
    if (pagemap_fd < 0) { snprintf(err, errlen, "cannot open /proc/self/pagemap: %s", strerror(-pagemap_fd)); return -1; }
    uint64_t pfn;
    if (pa_pagemap_pfn(pagemap_fd, &pfn, &pfn) == -EPERM) {
      snprintf(err, errlen, "/proc/self/pagemap hides frame numbers: the frames rule needs root (CAP_SYS_ADMIN)");
      close(pagemap_fd);
      pagemap_fd = -1;
      return -1;
    }
    pinarena_set_release_callback(on_release, NULL);
  }
  memset(slots, 0, sizeof slots);
  nframes = nkeys = 0;
  nreleases = release_outside = 0;
  op_index = 0;
  int rc = 0;
  for (const char* p = line; *p && rc == 0; ) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    const char* b = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
    if (p == b) break;
    pa_model_op_index = op_index;
    rc = step(b, (size_t)(p - b), (uint64_t)op_index);
    op_index++;
  }
  op_token = NULL;
  if (rc == 0) rc = observe_all("at the end");
  /* the end: every block freed (checked), then a trim gives everything back */
  for (int id = 0; id < SLOTS && rc == 0; id++) {
    slot_t* s = &slots[id];
    if (s->state != LIVE) continue;
    if (verify(id, "at the end")) { rc = -1; break; }
    if (s->remote) pinarena_free_remote(s->p); else free(s->p);
    s->state = FREED;
  }
  if (rc == 0) rc = op_trim();
  return rc;
}

int pa_model_replay_file(const char* path, int* count) {
  FILE* f = fopen(path, "r");
  *count = 0;
  if (f == NULL) { printf("FAIL 0 cannot open %s: %s\n", path, strerror(errno)); return -1; }
  static char line[1 << 16];
  static char err[1024];
  int lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    pa_model_line = lineno;
    char* p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '#' || *p == '\n' || *p == 0) continue;
    if (strncmp(p, "java:", 5) == 0) continue;
    if (strncmp(p, "c:", 2) == 0) p += 2;
    else if (strncmp(p, "both:", 5) == 0) p += 5;
    if (pa_model_replay(p, err, sizeof err) != 0) {
      printf("FAIL %d %s\n", lineno, err);
      fflush(stdout);
      fclose(f);
      return -1;
    }
    ++*count;
  }
  fclose(f);
  return 0;
}
