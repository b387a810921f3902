/* os.h — chunks of memory mapped from the OS, aligned to their size, with the
 * page size the kernel actually gave us.
 *
 * A chunk is the unit pinarena registers (pins) for RDMA / io_uring. It is
 * mapped once, either populated up front (pa_os_map_chunk) or lazily
 * (pa_os_map_lazy: pages come at first touch; a registration populates what
 * it pins) and, while registered, NEVER returned to the OS:
 *
 *   INVARIANT: a registered page is never unmapped, remapped, madvised away
 *   (MADV_DONTNEED / MADV_FREE) or mprotected while registered. pa_os_unmap_chunk
 *   is only for chunks that are not registered with any backend.
 *
 * Breaking the invariant is exactly the stale-registration hazard: the device
 * keeps the old physical pages while the virtual address gets new ones.
 *
 * Nothing here calls malloc or stdio, and there are no constructors, so a
 * malloc shim can stand on this layer. Its mmap/munmap/madvise are raw system
 * calls (never the interposed hooks): only pa_os_unmap_chunk posts to the
 * invalidation sinks (ivset.h), since a chunk it unmaps was handed out.
 */
#ifndef PA_OS_H
#define PA_OS_H

#include <stddef.h>
#include <stdint.h>

#define PA_KiB ((size_t)1 << 10)
#define PA_MiB ((size_t)1 << 20)
#define PA_GiB ((size_t)1 << 30)

#define PA_CHUNK_MIN (2 * PA_MiB)

typedef enum pa_backing_e {
  PA_BACK_HUGETLB_1G = 0,   /* MAP_HUGETLB, 1 GiB pages (only for chunks that are a multiple of 1 GiB) */
  PA_BACK_HUGETLB_2M,       /* MAP_HUGETLB, 2 MiB pages */
  PA_BACK_THP,              /* normal mapping + MADV_HUGEPAGE (transparent huge pages, best effort) */
  PA_BACK_4K,               /* normal mapping + MADV_NOHUGEPAGE */
  PA_BACK_COUNT
} pa_backing_t;

typedef struct pa_vma_info_s {
  uintptr_t start, end;         /* the VMA containing the address (may be larger than a chunk if merged) */
  uint64_t  kernel_page_kb;     /* KernelPageSize */
  uint64_t  rss_kb;             /* Rss */
  uint64_t  anon_huge_kb;       /* AnonHugePages (THP) */
} pa_vma_info_t;

typedef struct pa_mapping_s {
  void*        addr;            /* aligned to size */
  size_t       size;            /* power of two >= PA_CHUNK_MIN */
  pa_backing_t backing;         /* how it was mapped */
  size_t       page_size;       /* page size OBTAINED, read back from the kernel (smallest page in the chunk) */
  size_t       thp_bytes;       /* for THP: bytes backed by huge pages per smaps (exact when the VMA is the chunk) */
} pa_mapping_t;

/* Default preference: 1 GiB hugetlb (if size % 1 GiB == 0), 2 MiB hugetlb, THP, 4 KiB. */
extern const pa_backing_t pa_backing_default[PA_BACK_COUNT];

/* Map `size` bytes aligned to `size`, trying `prefs[0..nprefs)` in order
 * (NULL = pa_backing_default). The memory is populated and writable.
 * Returns 0, or -errno of the last attempt (-EINVAL for a bad size,
 * -ENOMEM typically when every backing was refused). */
int pa_os_map_chunk(size_t size, const pa_backing_t* prefs, size_t nprefs, pa_mapping_t* out);

/* Map `size` bytes aligned to `align` (powers of two, align >= 2 MiB, size a multiple of 2 MiB) WITHOUT
 * populating them: a page exists once it is touched or pinned, so untouched memory costs no RSS, no
 * memory-cgroup charge and no fork copy. `b`: PA_BACK_4K (MADV_NOHUGEPAGE, or with PA_LAZY_SYSTEM_THP no
 * advice: the system's THP policy applies, as for the program's own mappings), PA_BACK_THP
 * (MADV_HUGEPAGE), PA_BACK_HUGETLB_2M (hugetlb pool pages, reserved at mmap: a short pool fails here
 * with ENOMEM). PA_LAZY_NORESERVE: MAP_NORESERVE (no commit charge for address space that may never be
 * touched). The address range is reserved with at most size + align bytes of
 * address space at once. page_size reports the backing's page (4 KiB or 2 MiB), not read back.
 * Returns 0 or -errno. */
#define PA_LAZY_NORESERVE  1
#define PA_LAZY_SYSTEM_THP 2
int pa_os_map_lazy(size_t size, size_t align, pa_backing_t b, int flags, pa_mapping_t* out);

/* Advise huge pages for [addr, addr + len) before it is pinned, so that the parts nobody touched yet are
 * populated with 2 MiB pages by the pin. Keeps every page. Returns 0 or -errno. */
int pa_os_prefer_huge(void* addr, size_t len);

/* Refuse transparent huge pages for [addr, addr + len): the library's own tables and metadata, touched
 * sparsely, where THP "always" would make every touched 2 MiB region a whole huge page. Best effort (a
 * kernel without THP has nothing to refuse). */
void pa_os_refuse_huge(void* addr, size_t len);

/* The 4 KiB pages of [addr, addr + len) (page-aligned, ours) that are resident (mincore); a part that cannot
 * be read counts as not resident. Keeps errno. */
size_t pa_os_resident_pages(const void* addr, size_t len);

/* Move the pages of [from, from + len) to `to` (page-aligned, `to` a range of untouched pages of ours)
 * without copying them: the frames (pinned ones included) go with the contents. [from, from + len) stays
 * mapped throughout (MREMAP_DONTUNMAP: no hole another thread's mmap could take) and is then made
 * PROT_NONE in place, not to be used again until its owner unmaps it, and posted to the invalidation sinks (an address-keyed
 * cache must not find the old address any more). Returns 0 or -errno (nothing moved). */
int pa_os_move_pages(void* from, size_t len, void* to);

/* Zero [addr, addr + len) (addr page-aligned) without populating it: pages that were never populated
 * (neither present nor swapped out, per /proc/self/pagemap) read as zero already and are left alone.
 * Without pagemap, memset. */
void pa_os_zero_touched(void* addr, size_t len);

/* Give the pages of [addr, addr + len) (page-aligned) back to the OS, keeping the range mapped: it reads
 * as zero and takes new frames at the next touch (MADV_DONTNEED). Only for memory no registration covers
 * (the invariant above); posted to the invalidation sinks like an unmap. Returns 0 or -errno. */
int pa_os_discard(void* addr, size_t len);

/* Return a chunk to the OS. Only for chunks that are NOT registered (see the
 * invariant above). Returns 0 or -errno. */
int pa_os_unmap_chunk(pa_mapping_t* chunk);

/* What the kernel says about the VMA that contains `addr` (/proc/self/smaps).
 * Returns 0, -ENOENT when no VMA contains it, or -errno. */
int pa_os_vma_info(const void* addr, pa_vma_info_t* out);

/* Populate [addr, addr+len) writable: MADV_POPULATE_WRITE, else touch one byte per page. */
int pa_os_populate(void* addr, size_t len, size_t page);

const char* pa_backing_name(pa_backing_t b);

#endif
