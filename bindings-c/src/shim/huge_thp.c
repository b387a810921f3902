/* huge_thp.c — a huge chunk's 2 MiB regions at its object's edges refuse
 * transparent huge pages.
 *
 * A huge chunk keeps the system's THP policy (chunk_map): its object is
 * dense, as glibc's own mapping of it would be. But the chunk is wider than
 * the object: the header page and colour pages before it, room to grow
 * after it. Under THP "always" the first touch of the 2 MiB region holding
 * the header, and of the one holding the object's end, would each take a
 * whole huge page, up to 4 MiB beyond the object (CPython's test_dict under
 * "always": 34.8 MiB peak against glibc's 27.9). glibc's mapping ends where
 * the object does, so the kernel gives huge pages only to the regions
 * inside it; here the same. The header's region refuses them
 * (MADV_NOHUGEPAGE), and so does the region holding the object's end (room
 * above the object is untouched address space, but khugepaged would
 * collapse a region with a single present page in it).
 *
 * A refused region stays refused: an object taken later, or grown in place
 * past it, has 4 KiB pages there. Asking for them again (MADV_HUGEPAGE)
 * would put the region under the defrag setting's direct compaction on
 * fault, which a plain mapping is not (PINARENA_PAGES=thp: perf/native
 * `big` 1.40 x slower, compaction). Each region refused alone is an island:
 * two more mappings (itself, and the split above it); an object grown by half each time
 * (perf/native `regrow`) leaves one per step and keeps huge pages between
 * them. After PA_NH_ISLANDS of them a chunk refuses from its object's end
 * region to its own end instead, one mapping for all the rest, so a chunk
 * reused at many sizes cannot spend the process's mappings (vm.max_map_count).
 *
 * Only under "always": under "madvise" and "never" the regions get no huge
 * page anyway, and a split would cost system calls, mappings, and a move of
 * the object (pa_huge_move: mremap) from one mapping into several, which
 * kernels before 6.17 refuse (the object is copied then). A registration
 * asks for huge pages on what it pins (register.c), populating it whole; a
 * refusal set after it changes no page it pinned. */
#include "internal.h"
#include "../nocancel.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#define REGION ((uintptr_t)PA_CHUNK_MIN)   /* one PMD: what a transparent huge page maps */
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"
#define PA_NH_ISLANDS 8                    /* regions a chunk refuses alone; the header's is the first */

/* THP "always", read once ("always [madvise] never": the brackets mark the
 * mode); a kernel without THP has no file: not "always". Keeps errno: its
 * callers are malloc's paths. */
static _Atomic int thp_mode = -1;          /* -1 unread, 0 not always, 1 always */

PA_HIDDEN int pa_thp_always(void) {
  int m = atomic_load_explicit(&thp_mode, memory_order_relaxed);
  if (m >= 0) return m;
  char buf[64] = {0};
  int saved = errno;
  int fd = pa_nc_open(THP_ENABLED, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)pa_nc_read(fd, buf, sizeof buf - 1);
    pa_nc_close(fd);
  }
  errno = saved;
  m = strstr(buf, "[always]") != NULL;
  atomic_store_explicit(&thp_mode, m, memory_order_relaxed);   /* racing readers store the same */
  return m;
}

PA_HIDDEN void pa_huge_refuse_edges(pa_chunk_t* c) {
  if (!pa_huge_system_thp()) return;     /* PINARENA_PAGES=thp or 4k: chunk_map set the whole chunk */
  if (!pa_thp_always()) return;
  uintptr_t base = (uintptr_t)c, end = base + ((size_t)1 << c->shift);
  uintptr_t obj_end = base + pa_huge_extent(c);
  uintptr_t tail = obj_end & ~(REGION - 1);          /* the region holding the object's end */
  if (c->huge_nh_from == 0) c->huge_nh_from = end;    /* a new chunk: nothing refused yet */
  /* An object within the first two regions still refuses only its edges: it
   * may grow in place later, over regions it will fill (refusing the whole
   * chunk kept perf/native `regrow` on 4 KiB pages up to 58 MiB). */
  if (c->huge_nh_islands == 0) {                      /* the header's region, once */
    pa_os_refuse_huge(c, REGION);
    c->huge_nh_tail = base;
    c->huge_nh_islands = 1;
  }
  if (tail == obj_end || tail >= c->huge_nh_from || tail == c->huge_nh_tail) return;   /* nothing partial, or refused */
  if (c->huge_nh_islands < PA_NH_ISLANDS) {
    pa_os_refuse_huge((void*)tail, REGION);
    c->huge_nh_tail = tail;
    c->huge_nh_islands++;
    return;
  }
  pa_os_refuse_huge((void*)tail, c->huge_nh_from - tail);
  c->huge_nh_from = tail;
}
