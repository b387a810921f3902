/* classes.h — size classes: which class serves n bytes, and its block size.
 * Tables in classes.c, filled at init (pa_classes_init). */
#ifndef PA_SHIM_CLASSES_H
#define PA_SHIM_CLASSES_H

#include <stddef.h>
#include <stdint.h>
#include "../common.h"

/* Size classes: 16..128 every 16 B (classes 1..8), 160..256 every 32 B
 * (classes 9..12), then 8 per doubling (spacing 12.5 %) up to 256 KiB
 * (class 92). Usable size <= 1.125 * n + 16 for every n. The 32-byte steps
 * keep the number of classes a small-object program touches (and so its
 * partly used spans, all of them pinned) low where objects are most common.
 * Class 0 is unused. */
#define PA_NCLASS      93
#define PA_SMALL_MAX   ((size_t)256 << 10)
#define PA_DIRECT      (1024 / 16 + 1)      /* sizes the malloc fast path serves: 0..1 KiB */

extern PA_HIDDEN uint32_t pa_class_size[PA_NCLASS];   /* block size of each class */
extern PA_HIDDEN uint8_t pa_class_1k[PA_DIRECT];      /* class of (n + 15) / 16 for n <= 1 KiB */

/* The class of n > 256: 8 per doubling (classes.c's class_of for smaller n). */
static inline size_t pa_class_above_256(size_t n) {
  size_t m = n - 1;
  unsigned b = 63u - (unsigned)__builtin_clzl(m);      /* >= 8 */
  return 13 + (b - 8) * 8 + ((m >> (b - 3)) & 7);
}

static inline size_t pa_size_class(size_t n) {
  if (likely(n <= 1024)) return pa_class_1k[(n + 15) >> 4];
  return pa_class_above_256(n);
}

PA_HIDDEN void pa_classes_init(void);

#endif
