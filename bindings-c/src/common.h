/* common.h — what the C core and the shim would otherwise each write for
 * themselves: the base page size, branch hints, the export marker, and hex
 * formatting that needs neither malloc nor stdio.
 *
 * PA_EXPORT marks the functions libpinarena.so exports besides the malloc
 * family (the memory hooks, the invalidation sinks, the registration cache,
 * the userfaultfd monitor, pinarena.h). The shim compiles everything with
 * -fvisibility=hidden; a declaration with default visibility wins over it,
 * and src/shim/exports.map names what finally leaves the library. In the core
 * archive it changes nothing (default visibility anyway).
 *
 * Calls between these functions inside the shim go through the PLT: the
 * process has ONE sink table, the one of the first definition in symbol
 * lookup order (the shim when preloaded), and every hook, cache and Java
 * feed that binds by name uses it. */
#ifndef PA_COMMON_H
#define PA_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define PA_EXPORT __attribute__((visibility("default")))
#define PA_HIDDEN __attribute__((visibility("hidden")))   /* the shim's own, across its files */

/* The base page: the unit of mapping, protection and pinning on x86-64.
 * Larger pages (THP, hugetlb) are read back per chunk (os.h). */
#define PA_PAGE ((size_t)4096)

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* "0x" and the lowest hex digits of v, at least `digits` of them (1 gives
 * the shortest form), NUL-terminated; buf holds >= 19 bytes. Returns buf. */
static inline char* pa_fmt_hex_digits(char* buf, uint64_t v, int digits) {
  char tmp[16];
  int n = 0;
  do { tmp[n++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v || n < digits);
  char* p = buf;
  *p++ = '0'; *p++ = 'x';
  while (n) *p++ = tmp[--n];
  *p = 0;
  return buf;
}

static inline char* pa_fmt_hex(char* buf, uint64_t v) { return pa_fmt_hex_digits(buf, v, 1); }

#endif
