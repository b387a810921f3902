/* os.c — size-aligned chunk mapping with a backing preference list, and the
 * page size read back from the kernel.
 * Twin: registration/.../os/ChunkMapper.java and PageSizes.java implement the
 * same rules in Java; change both (shared scenario list: docs/ARCHITECTURE.md,
 * "Twins"). */
#define _GNU_SOURCE
#include "os.h"
#include "nocancel.h"
#include "ivset.h"
#include "procfs.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

const pa_backing_t pa_backing_default[PA_BACK_COUNT] = {
  PA_BACK_HUGETLB_1G, PA_BACK_HUGETLB_2M, PA_BACK_THP, PA_BACK_4K
};

const char* pa_backing_name(pa_backing_t b) {
  switch (b) {
    case PA_BACK_HUGETLB_1G: return "hugetlb-1G";
    case PA_BACK_HUGETLB_2M: return "hugetlb-2M";
    case PA_BACK_THP:        return "thp";
    case PA_BACK_4K:         return "4k";
    default:                 return "?";
  }
}

static inline int is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* ---------------------------------------------------------------------------
   The OS layer's own mmap/munmap/madvise are raw system calls. In a process
   whose munmap & co. are the memory hooks (libpinarena.so itself,
   libpinarena-hooks.so), a call by name would post to every invalidation
   sink. The calls below touch only ranges no registration can cover: a
   PROT_NONE reservation (cannot be pinned: EFAULT), its aligned half while
   it is being set up (the address is not known to anyone yet), and advice
   that keeps the pages (HUGEPAGE, NOHUGEPAGE, POPULATE_WRITE). The one
   unmap of memory that was handed out, pa_os_unmap_chunk, posts.
--------------------------------------------------------------------------- */

static inline void* os_mmap(void* a, size_t len, int prot, int flags) {
  return (void*)syscall(SYS_mmap, a, len, prot, flags, -1, 0);   /* -1 == MAP_FAILED, errno set */
}
static inline int os_munmap(void* a, size_t len) { return (int)syscall(SYS_munmap, a, len); }
static inline int os_madvise(void* a, size_t len, int advice) { return (int)syscall(SYS_madvise, a, len, advice); }

/* ---------------------------------------------------------------------------
   Fast path: one backing attempt
--------------------------------------------------------------------------- */

static int os_map_backing(size_t size, pa_backing_t b, void** out);
static int os_readback(pa_mapping_t* c);

int pa_os_map_chunk(size_t size, const pa_backing_t* prefs, size_t nprefs, pa_mapping_t* out) {
  if (size < PA_CHUNK_MIN || !is_pow2(size)) return -EINVAL;
  if (prefs == NULL) { prefs = pa_backing_default; nprefs = PA_BACK_COUNT; }
  int err = -EINVAL;
  for (size_t i = 0; i < nprefs; i++) {
    pa_backing_t b = prefs[i];
    if (b == PA_BACK_HUGETLB_1G && (size % PA_GiB) != 0) continue;
    void* p = NULL;
    err = os_map_backing(size, b, &p);
    if (err != 0) continue;              /* e.g. ENOMEM: hugetlb pool short -> next backing */
    out->addr = p; out->size = size; out->backing = b;
    out->page_size = 0; out->thp_bytes = 0;
    /* What the kernel gave, from smaps. Reading it needs a descriptor: a
       program using all of its descriptors still gets its memory, with the
       page size the backing asks for (THP: the base page, the safe guess). */
    if (os_readback(out) != 0) {
      out->page_size = b == PA_BACK_HUGETLB_1G ? PA_GiB : b == PA_BACK_HUGETLB_2M ? 2 * PA_MiB : PA_PAGE;
      out->thp_bytes = 0;
    }
    return 0;
  }
  return err;
}

int pa_os_discard(void* addr, size_t len) {
  uintptr_t a = (uintptr_t)addr;
  pa_iv_post(a, a + len);
  if (os_madvise(addr, len, MADV_DONTNEED) != 0) return -errno;
  pa_iv_post(a, a + len);
  return 0;
}

int pa_os_unmap_chunk(pa_mapping_t* c) {
  /* Caller guarantees: not registered by its owner (see os.h). But the memory
     was handed out, so an address-keyed cache (C, Java, an MPI library's) may
     hold a registration of part of it: post before and after, like the hooks. */
  if (c->addr == NULL) return -EINVAL;
  uintptr_t a = (uintptr_t)c->addr;
  pa_iv_post(a, a + c->size);
  if (os_munmap(c->addr, c->size) != 0) return -errno;
  pa_iv_post(a, a + c->size);
  c->addr = NULL;
  return 0;
}

/* ---------------------------------------------------------------------------
   Slow path: reserve 2N, map the aligned half, trim, advise, populate
--------------------------------------------------------------------------- */

int pa_os_populate(void* addr, size_t len, size_t page) {
  if (os_madvise(addr, len, MADV_POPULATE_WRITE) == 0) return 0;
  if (errno != EINVAL) return -errno;            /* EINVAL: kernel < 5.14 -> touch */
  volatile char* p = (volatile char*)addr;
  for (size_t off = 0; off < len; off += page) p[off] = p[off];
  return 0;
}

static int os_map_backing(size_t size, pa_backing_t b, void** out) {
  /* Reserve twice the size as PROT_NONE (no memory is committed), so that
     an address aligned to `size` exists inside it. */
  const size_t resv = 2 * size;
  char* base = os_mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (base == MAP_FAILED) return -errno;
  char* aligned = (char*)(((uintptr_t)base + size - 1) & ~(uintptr_t)(size - 1));

  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
  if (b == PA_BACK_HUGETLB_1G) flags |= MAP_HUGETLB | (30 << MAP_HUGE_SHIFT) | MAP_POPULATE;
  if (b == PA_BACK_HUGETLB_2M) flags |= MAP_HUGETLB | (21 << MAP_HUGE_SHIFT) | MAP_POPULATE;
  /* hugetlb: the pool reservation is taken at mmap time, so a short pool
     fails here with ENOMEM rather than with SIGBUS at first touch. */
  void* p = os_mmap(aligned, size, PROT_READ | PROT_WRITE, flags);   /* over our own reservation */
  if (p == MAP_FAILED) {
    int err = -errno;
    os_munmap(base, resv);         /* a failed MAP_FIXED may have punched the reservation: drop all of it */
    return err;
  }
  /* Trim the unused head and tail of the reservation. */
  if (aligned > base) os_munmap(base, (size_t)(aligned - base));
  char* tail = aligned + size;
  if (tail < base + resv) os_munmap(tail, (size_t)(base + resv - tail));

  int err = 0;
  if (b == PA_BACK_THP) {
    if (os_madvise(aligned, size, MADV_HUGEPAGE) != 0) err = -errno;   /* EINVAL: THP not built in */
    else err = pa_os_populate(aligned, size, PA_PAGE);
  }
  else if (b == PA_BACK_4K) {
    if (os_madvise(aligned, size, MADV_NOHUGEPAGE) != 0 && errno != EINVAL) err = -errno;
    else err = pa_os_populate(aligned, size, PA_PAGE);
  }
  if (err != 0) { os_munmap(aligned, size); return err; }
  *out = aligned;
  return 0;
}

int pa_os_map_lazy(size_t size, size_t align, pa_backing_t b, int lazy_flags, pa_mapping_t* out) {
  if (size < PA_CHUNK_MIN || (size & (PA_CHUNK_MIN - 1)) != 0 || align < PA_CHUNK_MIN || !is_pow2(align))
    return -EINVAL;
  if (size + align < size) return -ENOMEM;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | ((lazy_flags & PA_LAZY_NORESERVE) ? MAP_NORESERVE : 0);
  if (b == PA_BACK_HUGETLB_2M) flags |= MAP_HUGETLB | (21 << MAP_HUGE_SHIFT);
  else if (b == PA_BACK_HUGETLB_1G) flags |= MAP_HUGETLB | (30 << MAP_HUGE_SHIFT);
  /* The mapping itself, in one call when the kernel's pick is aligned (it
     usually is: mappings grow down, so a chunk lands just below the last
     one, at a multiple of its size), else at the aligned address just below
     or above that pick, which it takes as a hint. Only when neither is free:
     reserve size + align as PROT_NONE and map the aligned part over it, so
     that a tight RLIMIT_AS is spent on alignment only when it must be. */
  char* aligned = os_mmap(NULL, size, PROT_READ | PROT_WRITE, flags);
  if (aligned != MAP_FAILED && ((uintptr_t)aligned & (align - 1)) != 0) {
    char* below = (char*)((uintptr_t)aligned & ~(uintptr_t)(align - 1));
    char* hints[2] = { below, below + align };
    os_munmap(aligned, size);
    aligned = MAP_FAILED;
    for (int i = 0; i < 2 && aligned == MAP_FAILED; i++) {
      if (hints[i] == NULL) continue;
      aligned = os_mmap(hints[i], size, PROT_READ | PROT_WRITE, flags);
      if (aligned != MAP_FAILED && aligned != hints[i]) { os_munmap(aligned, size); aligned = MAP_FAILED; errno = EEXIST; }
    }
  }
  if (aligned == MAP_FAILED) {
    size_t resv = size + align - 4096;             /* room for an aligned start, nothing more */
    char* base = os_mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
    if (base == MAP_FAILED) return -errno;
    aligned = (char*)(((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1));
    void* p = os_mmap(aligned, size, PROT_READ | PROT_WRITE, flags | MAP_FIXED);   /* over our own reservation */
    if (p == MAP_FAILED) { int err = -errno; os_munmap(base, resv); return err; }
    if (aligned > base) os_munmap(base, (size_t)(aligned - base));
    char* tail = aligned + size;
    if (tail < base + resv) os_munmap(tail, (size_t)(base + resv - tail));
  }
  if (b == PA_BACK_THP) os_madvise(aligned, size, MADV_HUGEPAGE);    /* best effort: EINVAL without THP */
  else if (b == PA_BACK_4K && !(lazy_flags & PA_LAZY_SYSTEM_THP)) os_madvise(aligned, size, MADV_NOHUGEPAGE);
  out->addr = aligned; out->size = size; out->backing = b;
  out->page_size = b == PA_BACK_HUGETLB_2M ? 2 * PA_MiB : b == PA_BACK_HUGETLB_1G ? PA_GiB : 4096;
  out->thp_bytes = 0;
  return 0;
}

int pa_os_move_pages(void* from, size_t len, void* to) {
  uintptr_t a = (uintptr_t)from;
  /* MREMAP_DONTUNMAP: the pages go, the old range stays mapped (empty) the whole time, so no other
     thread's mmap can land in it between the move and the protection below; then it is made PROT_NONE
     in place (mprotect of our own range, never a mapping over someone else's). A kernel without it
     (before 5.7) refuses with EINVAL: nothing moved, the caller copies. */
  void* r = (void*)syscall(SYS_mremap, from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to);
  if (r == MAP_FAILED) return -errno;
  pa_iv_post(a, a + len);
  /* the old range stays ours, unusable: nothing else may be mapped there (a cache holding a registration
     of the old address would see new frames behind it) */
  syscall(SYS_mprotect, from, len, PROT_NONE);
  pa_iv_post(a, a + len);
  return 0;
}

void pa_os_zero_touched(void* addr, size_t len) {
  const size_t page = 4096;
  char* p = (char*)addr;
  int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ((uintptr_t)p & (page - 1)) != 0) { if (fd >= 0) pa_nc_close(fd); memset(p, 0, len); return; }
  uint64_t ent[512];                                 /* 2 MiB of address space per read */
  size_t done = 0;
  while (done < len) {
    size_t pages = (len - done + page - 1) / page;
    if (pages > 512) pages = 512;
    off_t at = (off_t)(((uintptr_t)p + done) / page * sizeof(uint64_t));
    ssize_t got = pa_nc_pread(fd, ent, pages * sizeof(uint64_t), at);
    if (got != (ssize_t)(pages * sizeof(uint64_t))) { memset(p + done, 0, len - done); break; }
    for (size_t i = 0; i < pages; i++) {
      size_t n = len - done < page ? len - done : page;
      if (ent[i] & (3ULL << 62)) memset(p + done, 0, n);   /* present or swapped: may hold data */
      done += n;
    }
  }
  pa_nc_close(fd);
}

int pa_os_prefer_huge(void* addr, size_t len) {
  return os_madvise(addr, len, MADV_HUGEPAGE) == 0 ? 0 : -errno;
}

void pa_os_refuse_huge(void* addr, size_t len) {
  int saved = errno;
  os_madvise(addr, len, MADV_NOHUGEPAGE);
  errno = saved;
}

size_t pa_os_resident_pages(const void* addr, size_t len) {
  const size_t page = 4096, step = 512 * page;    /* one 2 MiB region per call: a small vector on the stack */
  unsigned char vec[512];
  size_t got = 0;
  int saved = errno;
  for (size_t off = 0; off < len; off += step) {
    size_t n = len - off < step ? len - off : step;
    if (syscall(SYS_mincore, (const char*)addr + off, n, vec) != 0) continue;
    for (size_t i = 0; i < (n + page - 1) / page; i++) got += vec[i] & 1;
  }
  errno = saved;
  return got;
}

/* Fill page_size / thp_bytes from what smaps says, never from what we asked. */
static int os_readback(pa_mapping_t* c) {
  pa_vma_info_t v;
  int rc = pa_os_vma_info(c->addr, &v);
  if (rc != 0) return rc;
  c->page_size = (size_t)v.kernel_page_kb * PA_KiB;
  if (c->page_size == PA_PAGE && v.anon_huge_kb > 0) {
    /* THP: the VMA keeps KernelPageSize 4 kB; huge pages show in AnonHugePages.
       The chunk counts as huge only if the whole resident VMA is huge. */
    size_t vma = (size_t)(v.end - v.start);
    size_t huge = (size_t)v.anon_huge_kb * PA_KiB;
    c->thp_bytes = (huge < c->size ? huge : c->size);
    if (v.anon_huge_kb == v.rss_kb && huge >= vma) c->page_size = 2 * PA_MiB;
  }
  return 0;
}

static int smaps_key(const char* line, const char* key, uint64_t* out) {
  size_t k = strlen(key);
  if (strncmp(line, key, k) != 0 || line[k] != ':') return 0;
  return pa_parse_u64(line + k + 1, out) > 0;
}

int pa_os_vma_info(const void* addr, pa_vma_info_t* out) {
  pa_linereader_t lr;            /* ~4 KiB on the stack, no heap */
  int rc = pa_lr_open(&lr, "/proc/self/smaps");
  if (rc != 0) return rc;
  const uint64_t a = (uint64_t)(uintptr_t)addr;
  int inside = 0, found = 0;
  char* line;
  memset(out, 0, sizeof(*out));
  while (pa_lr_next(&lr, &line) >= 0) {
    uint64_t s, e;
    if (pa_parse_maps_range(line, &s, &e) > 0) {   /* smaps: a VMA's "start-end perms ..." line */
      if (inside) break;           /* past our VMA */
      inside = (a >= s && a < e);
      if (inside) { found = 1; out->start = (uintptr_t)s; out->end = (uintptr_t)e; }
      continue;
    }
    if (!inside) continue;
    if (smaps_key(line, "KernelPageSize", &out->kernel_page_kb)) continue;
    if (smaps_key(line, "Rss", &out->rss_kb)) continue;
    smaps_key(line, "AnonHugePages", &out->anon_huge_kb);
  }
  int err = lr.err;
  pa_lr_close(&lr);
  if (err != 0) return -err;
  return found ? 0 : -ENOENT;
}
