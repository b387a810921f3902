/* rxe_counter.h — rxe0's hardware counter of sent packets, the proof that bytes crossed the RDMA device
 * (and not shared memory or TCP). Both ranks of a one-VM run sit on rxe0, so it counts a whole transfer. */
#ifndef PINARENA_MPI_RXE_COUNTER_H
#define PINARENA_MPI_RXE_COUNTER_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define RXE_SENT_PKTS "/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts"

/* The kernel serves a device's hardware counters from a copy it refreshes at most every 10 ms
 * (RDMA_HW_STATS_DEFAULT_LIFESPAN): two reads closer together than that return the same value, whatever was
 * sent between them (a 5 x 64 KiB loop took 11.7 ms once the guest read time from the TSC, and counted 0
 * packets). So a read first waits 25 ms: the copy it gets was made after the wait began, and so counts
 * everything sent before the call. */
#define RXE_COUNTER_LIFESPAN_WAIT_NS 25000000L

/* The counter now, or 0 when it cannot be read (a run off the testbed: the caller's assertion then fails). */
static inline uint64_t rxe_sent_pkts(void) {
  struct timespec wait = { 0, RXE_COUNTER_LIFESPAN_WAIT_NS };
  while (nanosleep(&wait, &wait) != 0) {}
  FILE* f = fopen(RXE_SENT_PKTS, "r");
  if (!f) return 0;
  unsigned long long v = 0;
  if (fscanf(f, "%llu", &v) != 1) v = 0;
  fclose(f);
  return v;
}

#endif
