/* stats.c — the counters as one line (PINARENA_STATS at exit,
 * pinarena_write_stats) and as a struct (pinarena_get_stats). The line also
 * says what the RDMA stacks fed by the shim heard (ucm_unmaps: ranges
 * forwarded to UCX; ofi_subscribed, ofi_voided: ranges libfabric's cache
 * subscribed, and those an unmap voided), when it feeds them. */
#include "internal.h"
#include "../../include/pinarena.h"

#include <string.h>
#include <unistd.h>

static char* put(char* p, const char* s) { while (*s) *p++ = *s++; return p; }
static char* put_kv(char* p, const char* k, uint64_t v) {
  char n[24];
  p = put(p, " "); p = put(p, k); p = put(p, "="); return put(p, pa_fmt_u64(n, v));
}

PA_HIDDEN void pa_write_stats(int fd) {
  char line[2048];                     /* exe (255) and 21 fields of at most 44 bytes: < 1200 */
  char exe[256];
  ssize_t en = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[en > 0 ? en : 0] = 0;
  uint64_t mallocs, frees, remote;
  pa_register_check();
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
  p = put_kv(p, "thp_chunk_bytes", atomic_load(&pa_gstats.thp_chunk_bytes));
  p = put_kv(p, "huge_chunks", atomic_load(&pa_gstats.huge_chunks));
  p = put_kv(p, "huge_bytes", atomic_load(&pa_gstats.huge_bytes));
  p = put_kv(p, "huge_live_bytes", atomic_load(&pa_gstats.huge_live));
  p = put_kv(p, "registered_chunks", atomic_load(&pa_gstats.reg_chunks));
  p = put_kv(p, "registered_bytes", atomic_load(&pa_gstats.reg_bytes));
  p = put_kv(p, "unregistered_chunks", atomic_load(&pa_gstats.unreg_chunks));
  p = put_kv(p, "unregistered_bytes", atomic_load(&pa_gstats.unreg_bytes));
  p = put_kv(p, "released_bytes", atomic_load(&pa_gstats.released_bytes));
  /* a stack's fields only when the shim feeds it its unmaps (README: "hooks off") */
  long ucm = pinarena_stack_events_ucm(), ofi = pinarena_stack_events_ofi();
  if (ucm >= 0) p = put_kv(p, "ucm_unmaps", (uint64_t)ucm);
  if (ofi >= 0) {
    p = put_kv(p, "ofi_subscribed", (uint64_t)pinarena_stack_events_ofi_subscribed());
    p = put_kv(p, "ofi_voided", (uint64_t)ofi);
  }
  p = put(p, "\n");
  *p = 0;
  pa_write_str(fd, line);
}

PA_EXPORT int pinarena_get_stats(pinarena_stats_t* s) {
  memset(s, 0, sizeof(*s));
  pa_register_check();
  pa_small_counts(&s->small_mallocs, &s->small_frees, &s->remote_frees);
  s->large_allocs = atomic_load(&pa_gstats.large_allocs);
  s->huge_allocs = atomic_load(&pa_gstats.huge_allocs);
  s->chunks = atomic_load(&pa_gstats.chunks);
  s->chunk_bytes = atomic_load(&pa_gstats.chunk_bytes);
  s->huge_chunks = atomic_load(&pa_gstats.huge_chunks);
  s->huge_bytes = atomic_load(&pa_gstats.huge_bytes);
  s->registered_chunks = atomic_load(&pa_gstats.reg_chunks);
  s->registered_bytes = atomic_load(&pa_gstats.reg_bytes);
  s->unregistered_chunks = atomic_load(&pa_gstats.unreg_chunks);
  s->unregistered_bytes = atomic_load(&pa_gstats.unreg_bytes);
  s->released_bytes = atomic_load(&pa_gstats.released_bytes);
  const char* n = pa_registrar_name();
  size_t i = 0;
  for (; n[i] && i + 1 < sizeof(s->registrar); i++) s->registrar[i] = n[i];
  s->registrar[i] = 0;
  return 0;
}

PA_EXPORT void pinarena_write_stats(int fd) { pa_write_stats(fd); }
