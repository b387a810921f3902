/* regular_thp.c — which regular chunks keep the system's transparent huge
 * page policy: new ones once the heap is seen to fill what it maps, and
 * those of large objects of half a huge page or more.
 *
 * Under THP "always" the first touch of a 2 MiB-aligned region of a plain
 * mapping takes a whole huge page. A regular chunk refuses them (chunk_map,
 * MADV_NOHUGEPAGE): a small program's spans lie scattered over fresh
 * regions (mimalloc-bench's glibc-thread: 13.8 MiB peak against glibc's 2.0
 * with every chunk keeping the policy). But a program that fills what it
 * maps then pays 512 faults per 2 MiB, and page tables that every fork
 * copies: perf/native `phased` (256 MiB built four times) took 0.167 s
 * against mimalloc's 0.057, `fork` (1 GiB heap, 20 forks) 1.03 s against
 * mimalloc's 0.40 (medians of 9, under "always": mimalloc's segments take
 * huge pages on fault).
 *
 * So a new regular chunk keeps the policy once the process's regular chunks
 * span PA_THP_HEAP_MIN and those that refuse have 7/8 of their pages
 * resident: the program touches what it maps, and a huge page costs it
 * little more than the small pages it would have had. Slices in use are
 * not that signal: CPython's test_asyncio (PYTHONMALLOC=malloc) keeps
 * 80-98 % of its slices in use with 53-77 % of their pages touched (a rule
 * on slices raised its peak from 1.0 to 1.16-1.21 x glibc's), nor are the
 * newest chunks alone (its newest 64 MiB reached 89 %); before objects of
 * 1 MiB took chunks of their own (below), `phased` had 95 % resident at 64
 * MiB (256 of its 320 MiB kept the policy), `fork` 82 % at 128 and 7/8 by
 * 240 (a 4 MiB chunk holds three 1 MiB objects; 880 of 1120 MiB kept it);
 * perf/native `aligned` (a 4 KiB object per 2 MiB region) has 1 % (none).
 *
 * Residency is read with mincore, one 2 MiB region per call, about
 * PA_THP_SAMPLE of them spread over the refusing chunks, when a chunk is
 * about to be mapped and the chunks have grown by a quarter since the last
 * read: a sparse heap is read a few times as it grows, not for each chunk
 * (a read per chunk cost `aligned` 10 % of its time: 0.029 s -> 0.032). A
 * registered chunk counts as resident: its pins populated it, and huge
 * pages cost it nothing more. Once a chunk keeps the policy the answer
 * stays: a later read would see the same refusing chunks (only reclaim's
 * discards change them). Only under "always": under "madvise" and "never"
 * no region of a plain mapping gets a huge page unasked, and chunks refuse
 * as before without a read.
 *
 * A large object of half a huge page or more (PA_THP_LARGE_MIN) needs no
 * read: it fills at least half of each region it takes, two of them fill
 * one, and the program asked for every byte. Under "always" such a span
 * takes only chunks that keep the policy, made for it if none has room,
 * and no other span takes their untouched slices until the heap is seen
 * to fill what it maps (chunk.c, `serves`): glibc's heap gives its 1 MiB arrays huge pages
 * under "always", and hpcc's SingleFFT over rxe0 (in a guest under
 * "always"; emulated, so a TLB miss is a page-table walk in software) ran
 * at 0.88 x glibc's rate with its arrays on 4 KiB pages, 0.98 x on huge
 * pages (4 interleaved rounds). A huge object's chunk keeps the policy
 * already (huge_thp.c). */
#include "internal.h"

#define PA_THP_HEAP_MIN ((size_t)64 << 20)  /* regular chunks mapped before any keeps the policy */
#define PA_THP_SAMPLE   ((size_t)64 << 20)  /* of the refusing chunks' regions, about this much is read */
#define PA_THP_REGION   ((size_t)2 << 20)   /* one PMD: what a transparent huge page maps */
#define PA_THP_RESIDENT_NUM 7               /* resident pages / pages read, at least 7/8 */
#define PA_THP_RESIDENT_DEN 8
#define PA_THP_LARGE_MIN ((size_t)1 << 20)  /* a large span this big is at least half a huge page */

static int heap_fills;                      /* the answer was yes once (pa_chunk_lock) */
static size_t read_at = PA_THP_HEAP_MIN;    /* regular chunks' bytes at the next read (pa_chunk_lock) */

/* Regular chunks are left to the system's policy (PINARENA_PAGES=auto), and it is "always". */
static int system_always(void) {
  return pa_huge_system_thp() && pa_opts.pages != PA_PAGES_HUGETLB && pa_thp_always();
}

PA_HIDDEN int pa_regular_keeps_thp(void) {
  if (heap_fills) return 1;
  size_t mapped = (size_t)atomic_load_explicit(&pa_gstats.chunk_bytes, memory_order_relaxed);
  if (mapped < read_at || !system_always()) return 0;
  size_t refusing = 0;
  for (pa_chunk_t* c = pa_chunks; c != NULL; c = c->next) if (!c->thp_system) refusing += (size_t)1 << c->shift;
  /* one 2 MiB region in `stride`, odd: a chunk holds a power of two of them, so an odd stride reads each
     place in a chunk in turn (an even one read only chunks' first halves, where first fit packs) */
  size_t stride = ((refusing + PA_THP_SAMPLE - 1) / PA_THP_SAMPLE) | 1;
  size_t pages = 0, resident = 0, region = 0;
  for (pa_chunk_t* c = pa_chunks; c != NULL; c = c->next) {
    if (c->thp_system) continue;
    for (size_t off = 0; off < ((size_t)1 << c->shift); off += PA_THP_REGION)
      if (region++ % stride == 0) {
        pages += PA_THP_REGION / 4096;
        resident += pa_os_resident_pages((char*)c + off, PA_THP_REGION);
      }
  }
  heap_fills = pages > 0 && resident * PA_THP_RESIDENT_DEN >= pages * PA_THP_RESIDENT_NUM;
  read_at = mapped + mapped / 4;
  return heap_fills;
}

PA_HIDDEN int pa_regular_fills(void) { return heap_fills; }

PA_HIDDEN int pa_large_keeps_thp(size_t nslices) {
  return nslices << PA_SLICE_SHIFT >= PA_THP_LARGE_MIN && system_always();
}
