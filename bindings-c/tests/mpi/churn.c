/* churn.c — what an allocator costs an MPI's registration cache, counted. Two ranks.
 *
 *   mpirun -np 2 pinarena-mpi-churn ITERATIONS LOOP...      LOOP: churn:SIZE or reuse:SIZE
 *
 *   churn  rank 0 mallocs a buffer, fills it, sends it and frees it, ITERATIONS times (what codes that
 *          allocate a message buffer per message do)
 *   reuse  rank 0 mallocs one buffer and sends it ITERATIONS times (the cache's best case)
 *
 * The loops run one after the other in one process (one MPI start-up: the guest is slow to start one), so a
 * loop may find a registration an earlier loop left in the cache. Rank 1 receives into one buffer and checks
 * every byte. Rank 0 prints one line per loop:
 *   loop mode=M size=N iters=K bad=B regs=R deregs=D addrs=A seconds=S sent_pkts=P
 * regs/deregs: registrations rank 0's MPI made and dropped inside the loop (libpinarena-regcount.so
 * preloaded, else -1); addrs: distinct buffer addresses the loop saw; seconds: the loop's wall time (an
 * emulated machine: compare it only with other runs of the same guest). Each rank prints "rank=R pid=P".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "regcount.h"
#include "rxe_counter.h"

enum { TAG_DATA = 1, TAG_RESULT = 2, MAX_ITERATIONS = 1000 };

static char letter_of(int i) { return (char)('a' + i % 26); }

static void receive_all(size_t size, int iterations) {
  char* buf = malloc(size);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
  long bad = 0;
  for (int i = 0; i < iterations; i++) {
    MPI_Recv(buf, (int)size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const char want = letter_of(i);
    for (size_t b = 0; b < size; b++) bad += buf[b] != want;
  }
  MPI_Send(&bad, 1, MPI_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
  free(buf);
}

static int distinct(void* const* addrs, int n) {
  int count = 0;
  for (int i = 0; i < n; i++) {
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) seen = addrs[j] == addrs[i];
    count += !seen;
  }
  return count;
}

static void send_all(int churn, size_t size, int iterations, const char* mode) {
  static void* addrs[MAX_ITERATIONS];
  struct regcount r0, r1;
  char* kept = churn ? NULL : malloc(size);
  MPI_Barrier(MPI_COMM_WORLD);
  const int counted = regcount_now(&r0);
  const uint64_t pkts0 = rxe_sent_pkts();
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iterations; i++) {
    char* p = churn ? malloc(size) : kept;
    if (!p) MPI_Abort(MPI_COMM_WORLD, 1);
    addrs[i] = p;
    memset(p, letter_of(i), size);
    MPI_Send(p, (int)size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
    if (churn) free(p);
  }
  long bad = -1;
  MPI_Recv(&bad, 1, MPI_LONG, 1, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const double seconds = MPI_Wtime() - t0;
  const uint64_t pkts = rxe_sent_pkts() - pkts0;
  regcount_now(&r1);
  printf("loop mode=%s size=%zu iters=%d bad=%ld regs=%ld deregs=%ld addrs=%d seconds=%.4f sent_pkts=%llu\n", mode,
         size, iterations, bad, counted ? (long)(r1.regs - r0.regs) : -1L,
         counted ? (long)(r1.deregs - r0.deregs) : -1L, distinct(addrs, iterations), seconds,
         (unsigned long long)pkts);
  fflush(stdout);
  free(kept);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int iterations = argc >= 3 ? atoi(argv[1]) : 0;
  int ok = ranks == 2 && iterations >= 1 && iterations <= MAX_ITERATIONS;
  for (int a = 2; a < argc && ok; a++) ok = !strncmp(argv[a], "churn:", 6) || !strncmp(argv[a], "reuse:", 6);
  if (!ok || argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 %s ITERATIONS(1..%d) churn:SIZE|reuse:SIZE...\n", argv[0],
                           MAX_ITERATIONS);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  printf("rank=%d pid=%d\n", rank, (int)getpid());
  fflush(stdout);
  for (int a = 2; a < argc; a++) {
    const int churn = argv[a][0] == 'c';
    const size_t size = strtoull(argv[a] + 6, NULL, 0);
    if (rank == 0) send_all(churn, size, iterations, churn ? "churn" : "reuse");
    else {
      MPI_Barrier(MPI_COMM_WORLD);
      receive_all(size, iterations);
    }
  }
  MPI_Finalize();
  return 0;
}
