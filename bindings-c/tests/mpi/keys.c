/* keys.c — an MPI program that uses the shim's keys directly, with no registration cache at all.
 *
 *   LD_PRELOAD=libpinarena.so mpirun -np 2 pinarena-mpi-keys WRITES
 *
 * Both ranks open rxe0, allocate a PD and hand it to the shim (pinarena_set_pd), so everything malloc returns
 * is registered on that PD. Rank 1 mallocs a target buffer and sends its address and rkey (from
 * pinarena_lookup) to rank 0 over MPI. Rank 0, WRITES times: mallocs a buffer (4 KiB .. 4 MiB, cycling), fills
 * it, finds its lkey with pinarena_lookup, posts an RDMA WRITE into the target, frees the buffer, and asks
 * rank 1 to check every byte. Rank 0 prints:
 *   keys writes=N bytes=B lookups=L bad=X regs_first=R regs_warm=W sent_pkts=P
 * lookups: pinarena_lookup calls that returned verbs keys; regs: memory registrations made through the global
 * libibverbs from each malloc to its free (libpinarena-regcount.so preloaded, else -1), over the first round
 * of sizes and over the rest: regs_warm is 0, nothing is registered for a write. (The MPI messages between the
 * writes are not counted; the first round has been seen to include one registration the MPI makes on its own.)
 * Exit status 1 on any failure, with the reason on stderr.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer_qp.h"
#include "pinarena.h"
#include "regcount.h"
#include "rxe_counter.h"

enum { TAG_TARGET = 1, TAG_CHECK = 2, TAG_RESULT = 3 };
static const size_t SIZES[] = {4096, 65536, 1048576, 4194304};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])
#define TARGET_SIZE ((size_t)4194304)

typedef int (*lookup_fn)(const void*, size_t, pinarena_region_t*);
typedef int (*set_pd_fn)(void*);
static lookup_fn lookup;

struct target {
  uint64_t addr;
  uint32_t rkey;
};

static void die(const char* what, int err) {
  fprintf(stderr, "keys: %s (%d: %s)\n", what, err, strerror(err < 0 ? -err : err));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Memory a peer may write into, and its remote key. The one place that says how exposed memory is asked for:
 * the shim's heap is local-only, so the target comes from pinarena_alloc_remote (a key for exactly this
 * buffer, revoked by pinarena_free_remote). */
typedef void* (*alloc_remote_fn)(size_t, int);
typedef int (*free_remote_fn)(void*);
static alloc_remote_fn alloc_remote;
static free_remote_fn free_remote;

static void* target_alloc(size_t size, uint32_t* rkey) {
  void* p = alloc_remote(size, PINARENA_REMOTE_WRITE | PINARENA_REMOTE_READ);
  if (!p) die("pinarena_alloc_remote of the target buffer", errno);
  pinarena_region_t r;
  int rc = lookup(p, size, &r);
  if (rc) die("target buffer: no keys", rc);
  if (r.rkey == PINARENA_RKEY_NONE) die("target buffer: no remote key", EINVAL);
  *rkey = r.rkey;
  return p;
}

static void target_free(void* p) {
  int rc = free_remote(p);
  if (rc) die("pinarena_free_remote of the target buffer", rc);
}

static void run_target(void) {
  struct target t;
  char* buf = target_alloc(TARGET_SIZE, &t.rkey);
  t.addr = (uintptr_t)buf;
  memset(buf, '.', TARGET_SIZE);
  MPI_Send(&t, sizeof t, MPI_BYTE, 0, TAG_TARGET, MPI_COMM_WORLD);
  long check[2];  /* size, letter; size 0 ends */
  for (;;) {
    MPI_Recv(check, 2, MPI_LONG, 0, TAG_CHECK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (check[0] == 0) break;
    long bad = 0;
    for (long i = 0; i < check[0]; i++) bad += buf[i] != (char)check[1];
    MPI_Send(&bad, 1, MPI_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
  }
  target_free(buf);
}

static int run_writer(pa_peer_qp_t* q, int writes) {
  struct target t;
  MPI_Recv(&t, sizeof t, MPI_BYTE, 1, TAG_TARGET, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  struct regcount r0, r1;
  int counted = 1;
  long lookups = 0, bad_total = 0, bytes = 0, regs_first = 0, regs_warm = 0;
  const uint64_t pkts0 = rxe_sent_pkts();
  for (int i = 0; i < writes; i++) {
    counted &= regcount_now(&r0);
    const size_t size = SIZES[i % NSIZES];
    const char letter = (char)('a' + i % 26);
    char* p = malloc(size);
    if (!p) die("malloc", -ENOMEM);
    memset(p, letter, size);
    pinarena_region_t r;
    int rc = lookup(p, size, &r);
    if (rc) die("pinarena_lookup of a malloc'ed buffer", rc);
    if (!r.registered || r.backend != PINARENA_BACKEND_VERBS) die("pinarena_lookup: not a verbs registration", 0);
    lookups++;
    rc = pa_peer_write(q, p, (uint32_t)size, r.lkey, t.addr, t.rkey);
    if (rc) die("RDMA WRITE", rc);
    free(p);
    regcount_now(&r1);
    *(i < (int)NSIZES ? &regs_first : &regs_warm) += (long)(r1.regs - r0.regs);
    long check[2] = {(long)size, letter}, bad = -1;
    MPI_Send(check, 2, MPI_LONG, 1, TAG_CHECK, MPI_COMM_WORLD);
    MPI_Recv(&bad, 1, MPI_LONG, 1, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    bad_total += bad;
    bytes += (long)size;
  }
  const uint64_t pkts = rxe_sent_pkts() - pkts0;
  long end[2] = {0, 0};
  MPI_Send(end, 2, MPI_LONG, 1, TAG_CHECK, MPI_COMM_WORLD);
  printf("keys writes=%d bytes=%ld lookups=%ld bad=%ld regs_first=%ld regs_warm=%ld sent_pkts=%llu\n", writes,
         bytes, lookups, bad_total, counted ? regs_first : -1L, counted ? regs_warm : -1L, (unsigned long long)pkts);
  fflush(stdout);
  return bad_total != 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int writes = argc == 2 ? atoi(argv[1]) : 0;
  if (ranks != 2 || writes < 1) {
    if (rank == 0) fprintf(stderr, "usage: LD_PRELOAD=libpinarena.so mpirun -np 2 %s WRITES\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  lookup = (lookup_fn)dlsym(RTLD_DEFAULT, "pinarena_lookup");
  set_pd_fn set_pd = (set_pd_fn)dlsym(RTLD_DEFAULT, "pinarena_set_pd");
  alloc_remote = (alloc_remote_fn)dlsym(RTLD_DEFAULT, "pinarena_alloc_remote");
  free_remote = (free_remote_fn)dlsym(RTLD_DEFAULT, "pinarena_free_remote");
  if (!lookup || !set_pd || !alloc_remote || !free_remote) die("libpinarena.so is not loaded (LD_PRELOAD it)", ENOENT);

  pa_peer_qp_t q;
  int rc = pa_peer_open(&q, "rxe0");
  if (rc) die("rxe0", rc);
  if ((rc = set_pd(q.pd))) die("pinarena_set_pd", rc);
  pa_peer_addr_t peer;
  MPI_Sendrecv(&q.self, sizeof q.self, MPI_BYTE, 1 - rank, 0, &peer, sizeof peer, MPI_BYTE, 1 - rank, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if ((rc = pa_peer_connect(&q, &peer))) die("connecting the queue pairs", rc);
  MPI_Barrier(MPI_COMM_WORLD);

  int status = 0;
  if (rank == 0) status = run_writer(&q, writes);
  else run_target();
  MPI_Barrier(MPI_COMM_WORLD);
  pa_peer_close(&q);
  MPI_Finalize();
  return status;
}
