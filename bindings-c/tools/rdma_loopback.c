/* rdma_loopback.c — data over real RDMA on one device: two RC queue pairs on the
 * same port, connected to each other, that RDMA-WRITE and SEND buffers and check
 * every byte that arrives.
 *
 *   pinarena-rdma-loopback data   [-d DEV]  arena-style chunks (registered once), sizes 1 B .. 4 MiB
 *   pinarena-rdma-loopback hazard [-d DEV]  the seed's hazard over RDMA: glibc malloc + an
 *                                           address-keyed registration cache sends stale bytes;
 *                                           a registered chunk reused in place does not
 *   pinarena-rdma-loopback cost   [-d DEV] [-m MAX_MIB] [-r REPS]
 *                                           ibv_reg_mr + ibv_dereg_mr, 4 KiB .. MAX, 4 KiB pages,
 *                                           transparent huge pages and 2 MiB hugetlb pages; one CSV
 *                                           line per (backing, size)
 *
 * Exit status 0 when every check held; each failed check prints one "FAIL: ..." line.
 * It exists because ibv_post_send and ibv_poll_cq are inline functions in verbs.h:
 * they cannot be called through an FFI. The queue pairs are verbs_pair.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "os.h"
#include "pagemap.h"

#include "verbs_pair.h"

typedef pa_vp_t rdma_pair_t;

static int failures;

static void fail(const char* what, const char* detail) {
  failures++;
  printf("FAIL: %s: %s\n", what, detail);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int rdma_write(rdma_pair_t* p, struct ibv_mr* src_mr, const void* src, uint32_t len,
                      struct ibv_mr* dst_mr, void* dst) {
  return pa_vp_write(p, src, len, src_mr->lkey, dst, dst_mr->rkey);
}

static int rdma_send(rdma_pair_t* p, struct ibv_mr* src_mr, const void* src, uint32_t len,
                     struct ibv_mr* dst_mr, void* dst) {
  return pa_vp_send(p, src, len, src_mr->lkey, dst, dst_mr->lkey);
}

static void fill(uint8_t* buf, size_t len, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; i++) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; buf[i] = (uint8_t)x; }
}

static const int ACCESS_ALL = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

/* Two chunks registered once each; buffers carved from them at several offsets and sizes. */
static int cmd_data(rdma_pair_t* p) {
  pa_mapping_t src_chunk, dst_chunk;
  if (pa_os_map_chunk(8 * PA_MiB, NULL, 0, &src_chunk) || pa_os_map_chunk(8 * PA_MiB, NULL, 0, &dst_chunk)) {
    fail("data", "could not map chunks");
    return 1;
  }
  struct ibv_mr* src_mr = ibv_reg_mr(p->pd, src_chunk.addr, src_chunk.size, ACCESS_ALL);
  struct ibv_mr* dst_mr = ibv_reg_mr(p->pd, dst_chunk.addr, dst_chunk.size, ACCESS_ALL);
  if (!src_mr || !dst_mr) { fail("ibv_reg_mr", strerror(errno)); return 1; }
  printf("chunks: src %p (%s, page %zu KiB) lkey 0x%x, dst %p (%s) rkey 0x%x\n",
         src_chunk.addr, pa_backing_name(src_chunk.backing), src_chunk.page_size >> 10, src_mr->lkey,
         dst_chunk.addr, pa_backing_name(dst_chunk.backing), dst_mr->rkey);

  static const uint32_t sizes[] = { 1, 63, 64, 4096, 65536, 1u << 20, 4u << 20 };
  uint64_t bytes = 0;
  int checks = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    for (int op = 0; op < 2; op++) {
      uint32_t len = sizes[i];
      size_t offset = (i * 4096 + (size_t)op * 64) % (4 * PA_MiB - 1);   /* different places in the chunks */
      uint8_t* src = (uint8_t*)src_chunk.addr + offset;
      uint8_t* dst = (uint8_t*)dst_chunk.addr + offset;
      fill(src, len, (uint32_t)(i * 2 + (size_t)op));
      memset(dst, 0xEE, len);
      int rc = op == 0 ? rdma_write(p, src_mr, src, len, dst_mr, dst) : rdma_send(p, src_mr, src, len, dst_mr, dst);
      char what[64];
      snprintf(what, sizeof what, "%s of %u bytes", op == 0 ? "RDMA WRITE" : "SEND", len);
      if (rc) { fail(what, strerror(-rc)); continue; }
      if (memcmp(src, dst, len) != 0) {
        size_t at = 0;
        while (src[at] == dst[at]) at++;
        char detail[96];
        snprintf(detail, sizeof detail, "byte %zu differs (sent 0x%02x, arrived 0x%02x)", at, src[at], dst[at]);
        fail(what, detail);
        continue;
      }
      checks++;
      bytes += len;
    }
  }
  printf("data: %d transfers checked byte for byte, %llu bytes\n", checks, (unsigned long long)bytes);
  ibv_dereg_mr(src_mr);
  ibv_dereg_mr(dst_mr);
  pa_os_unmap_chunk(&src_chunk);
  pa_os_unmap_chunk(&dst_chunk);
  return failures ? 1 : 0;
}

#define HAZARD_BYTES ((size_t)32 << 20)   /* above glibc's mmap threshold: free() munmaps it */
#define MESSAGE_BYTES 4096u

typedef struct cache_entry_s { uintptr_t addr; size_t len; struct ibv_mr* mr; } cache_entry_t;

/* The seed's registration cache: by virtual address, no invalidation. */
static struct ibv_mr* cache_get(rdma_pair_t* p, cache_entry_t* cache, int* n, void* addr, size_t len, int* hit) {
  for (int i = 0; i < *n; i++) {
    if ((uintptr_t)addr >= cache[i].addr && (uintptr_t)addr + len <= cache[i].addr + cache[i].len) {
      *hit = 1;
      return cache[i].mr;
    }
  }
  *hit = 0;
  struct ibv_mr* mr = ibv_reg_mr(p->pd, addr, len, ACCESS_ALL);
  if (mr) cache[(*n)++] = (cache_entry_t){ (uintptr_t)addr, len, mr };
  return mr;
}

static uint64_t frame_of(const void* addr) {
  uint64_t pfn = 0;
  int fd = pa_pagemap_open();
  if (fd < 0) return 0;
  int rc = pa_pagemap_pfn(fd, addr, &pfn);
  close(fd);
  return rc == 0 ? pfn : 0;
}

static int cmd_hazard(rdma_pair_t* p) {
  pa_mapping_t dst_chunk;
  if (pa_os_map_chunk(2 * PA_MiB, NULL, 0, &dst_chunk)) { fail("hazard", "could not map the receive chunk"); return 1; }
  struct ibv_mr* dst_mr = ibv_reg_mr(p->pd, dst_chunk.addr, dst_chunk.size, ACCESS_ALL);
  if (!dst_mr) { fail("ibv_reg_mr", strerror(errno)); return 1; }
  uint8_t* dst = dst_chunk.addr;
  uint8_t old_bytes[MESSAGE_BYTES], new_bytes[MESSAGE_BYTES];
  memset(old_bytes, 'A', sizeof old_bytes);
  memset(new_bytes, 'B', sizeof new_bytes);

  /* (a) glibc malloc + address-keyed cache. */
  mallopt(M_MMAP_THRESHOLD, 1 << 20);   /* fixed: glibc would raise it after the first free */
  cache_entry_t cache[4];
  int entries = 0, hit = 0;
  void* first = malloc(HAZARD_BYTES);
  memcpy(first, old_bytes, MESSAGE_BYTES);
  struct ibv_mr* mr = cache_get(p, cache, &entries, first, MESSAGE_BYTES, &hit);
  if (!mr) { fail("ibv_reg_mr (glibc buffer)", strerror(errno)); return 1; }
  uint64_t frame_before = frame_of(first);
  free(first);
  void* second = malloc(HAZARD_BYTES);
  if (second != first) {
    fail("hazard (a)", "glibc did not return the same address; the scenario needs it");
  } else {
    memcpy(second, new_bytes, MESSAGE_BYTES);
    uint64_t frame_after = frame_of(second);
    struct ibv_mr* cached = cache_get(p, cache, &entries, second, MESSAGE_BYTES, &hit);
    memset(dst, 0, MESSAGE_BYTES);
    int rc = rdma_write(p, cached, second, MESSAGE_BYTES, dst_mr, dst);
    int stale = rc == 0 && memcmp(dst, old_bytes, MESSAGE_BYTES) == 0;
    printf("(a) glibc: %p reused, cache %s, frame 0x%llx -> 0x%llx, RDMA WRITE delivered '%c...' : %s\n",
           second, hit ? "HIT" : "miss", (unsigned long long)frame_before, (unsigned long long)frame_after,
           dst[0], stale ? "STALE (hazard reproduced)" : "not stale");
    if (rc) fail("hazard (a) RDMA WRITE", strerror(-rc));
    else if (!hit || !stale) fail("hazard (a)", "expected a cache hit that sends the old bytes");
  }
  for (int i = 0; i < entries; i++) ibv_dereg_mr(cache[i].mr);
  free(second);

  /* (b) a chunk registered once; "free" keeps it, the next allocation reuses it in place. */
  pa_mapping_t chunk;
  if (pa_os_map_chunk(HAZARD_BYTES, NULL, 0, &chunk)) { fail("hazard (b)", "could not map a chunk"); return 1; }
  struct ibv_mr* chunk_mr = ibv_reg_mr(p->pd, chunk.addr, chunk.size, ACCESS_ALL);
  if (!chunk_mr) { fail("ibv_reg_mr (chunk)", strerror(errno)); return 1; }
  memcpy(chunk.addr, old_bytes, MESSAGE_BYTES);
  uint64_t chunk_frame_before = frame_of(chunk.addr);
  memcpy(chunk.addr, new_bytes, MESSAGE_BYTES);           /* same address, handed out again */
  uint64_t chunk_frame_after = frame_of(chunk.addr);
  memset(dst, 0, MESSAGE_BYTES);
  int rc = rdma_write(p, chunk_mr, chunk.addr, MESSAGE_BYTES, dst_mr, dst);
  int correct = rc == 0 && memcmp(dst, new_bytes, MESSAGE_BYTES) == 0;
  printf("(b) pinarena chunk: %p (%s), frame 0x%llx -> 0x%llx, RDMA WRITE delivered '%c...' : %s\n",
         chunk.addr, pa_backing_name(chunk.backing), (unsigned long long)chunk_frame_before,
         (unsigned long long)chunk_frame_after, dst[0], correct ? "correct" : "WRONG");
  if (!correct || chunk_frame_before != chunk_frame_after) fail("hazard (b)", "pinarena memory sent stale bytes");
  ibv_dereg_mr(chunk_mr);
  pa_os_unmap_chunk(&chunk);
  ibv_dereg_mr(dst_mr);
  pa_os_unmap_chunk(&dst_chunk);
  return failures ? 1 : 0;
}

static int reserve_guest_hugepages(size_t bytes) {
  FILE* f = fopen("/proc/sys/vm/nr_hugepages", "w");
  if (!f) return -errno;
  fprintf(f, "%zu\n", bytes / (2 * PA_MiB) + 1);
  return fclose(f) == 0 ? 0 : -errno;
}

/* The label of a measured chunk: its backing, and for THP whether the kernel
 * gave huge pages for all of it ("thp") or not ("thp-partial": the row says
 * what THP costs only when it is "thp"). */
static const char* cost_label(const pa_mapping_t* c) {
  if (c->backing != PA_BACK_THP) return pa_backing_name(c->backing);
  return c->thp_bytes >= c->size ? "thp" : "thp-partial";
}

static int cmd_cost(rdma_pair_t* p, size_t max_mib, int reps) {
  static const pa_backing_t backings[] = { PA_BACK_4K, PA_BACK_THP, PA_BACK_HUGETLB_2M };
  size_t max = max_mib * PA_MiB;
  reserve_guest_hugepages(max);   /* best effort; a hugetlb map failure is reported per row */
  printf("backend,backing,bytes,reps,min_us,median_us,max_us,us_per_mib\n");
  for (int b = 0; b < 3; b++) {
    for (size_t len = 4 * PA_KiB; len <= max; len *= 4) {
      size_t chunk_size = len < PA_CHUNK_MIN ? PA_CHUNK_MIN : len;
      pa_mapping_t chunk;
      if (pa_os_map_chunk(chunk_size, &backings[b], 1, &chunk)) {
        printf("verbs,%s,%zu,0,,,,could not map\n", pa_backing_name(backings[b]), len);
        continue;
      }
      double samples[64];
      int n = reps > 64 ? 64 : reps;
      for (int r = 0; r < n; r++) {
        int64_t t0 = now_ns();
        struct ibv_mr* mr = ibv_reg_mr(p->pd, chunk.addr, len, IBV_ACCESS_LOCAL_WRITE);
        if (!mr) { fail("ibv_reg_mr", strerror(errno)); break; }
        ibv_dereg_mr(mr);
        samples[r] = (double)(now_ns() - t0) / 1000.0;
      }
      for (int i = 1; i < n; i++) {           /* insertion sort: n is tiny */
        double v = samples[i]; int j = i - 1;
        while (j >= 0 && samples[j] > v) { samples[j + 1] = samples[j]; j--; }
        samples[j + 1] = v;
      }
      double mib = (double)len / (double)PA_MiB;
      printf("verbs,%s,%zu,%d,%.1f,%.1f,%.1f,%.2f\n", cost_label(&chunk), len, n, samples[0], samples[n / 2],
             samples[n - 1], samples[n / 2] / mib);
      pa_os_unmap_chunk(&chunk);
    }
  }
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s data|hazard|cost [-d DEVICE] [-m MAX_MIB] [-r REPS]\n", argv[0]);
    return 2;
  }
  const char* device = NULL;
  size_t max_mib = 1024;
  int reps = 5;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-d") == 0) device = argv[i + 1];
    else if (strcmp(argv[i], "-m") == 0) max_mib = strtoull(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "-r") == 0) reps = atoi(argv[i + 1]);
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  rdma_pair_t pair;
  if (pa_vp_open(&pair, device) != 0) { pa_vp_close(&pair); return 1; }
  printf("device %s, GID index %d, QPs %u <-> %u\n", pair.device, pair.gid_index, pair.sender->qp_num,
         pair.receiver->qp_num);
  int rc;
  if (strcmp(argv[1], "data") == 0) rc = cmd_data(&pair);
  else if (strcmp(argv[1], "hazard") == 0) rc = cmd_hazard(&pair);
  else if (strcmp(argv[1], "cost") == 0) rc = cmd_cost(&pair, max_mib, reps);
  else { fprintf(stderr, "unknown command %s\n", argv[1]); rc = 2; }
  pa_vp_close(&pair);
  /* cost's stdout is its CSV (perf/ reads it): the device line before the header, nothing after the rows */
  if (rc == 0) fprintf(strcmp(argv[1], "cost") == 0 ? stderr : stdout, "%s: ok\n", argv[1]);
  return rc;
}
