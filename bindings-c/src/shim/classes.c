/* classes.c — the size-class tables (classes.h), filled once at init. */
#include "internal.h"

PA_HIDDEN uint32_t pa_class_size[PA_NCLASS];

/* Filled before the first allocation: class 1 for 0 (malloc(0) gets 16 bytes). */
PA_HIDDEN uint8_t pa_class_1k[1024 / 16 + 1] = { [0 ... 1024 / 16] = 1 };

/* The classes of internal.h (PA_NCLASS). */
static size_t class_of(size_t n) {
  if (n <= 128) return n == 0 ? 1 : (n + 15) >> 4;
  if (n <= 256) return 9 + ((n - 129) >> 5);
  return pa_class_above_256(n);
}
PA_HIDDEN void pa_classes_init(void) {
  for (size_t i = 0; i <= 1024 / 16; i++) pa_class_1k[i] = (uint8_t)class_of(i * 16);
  for (size_t c = 1; c < PA_NCLASS; c++) {
    if (c <= 8) { pa_class_size[c] = (uint32_t)(c * 16); continue; }
    if (c <= 12) { pa_class_size[c] = (uint32_t)(128 + (c - 8) * 32); continue; }
    size_t b = 8 + (c - 13) / 8, m = (c - 13) % 8;
    pa_class_size[c] = (uint32_t)(((size_t)1 << b) + ((m + 1) << (b - 3)));
  }
}
