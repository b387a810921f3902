/* rxe_counter.h — rxe0's hardware counter of sent packets, the proof that bytes crossed the RDMA device
 * (and not shared memory or TCP). Both ranks of a one-VM run sit on rxe0, so it counts a whole transfer. */
#ifndef PINARENA_MPI_RXE_COUNTER_H
#define PINARENA_MPI_RXE_COUNTER_H

#include <stdint.h>
#include <stdio.h>

#define RXE_SENT_PKTS "/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts"

/* The counter now, or 0 when it cannot be read (a run off the testbed: the caller's assertion then fails). */
static inline uint64_t rxe_sent_pkts(void) {
  FILE* f = fopen(RXE_SENT_PKTS, "r");
  if (!f) return 0;
  unsigned long long v = 0;
  if (fscanf(f, "%llu", &v) != 1) v = 0;
  fclose(f);
  return v;
}

#endif
