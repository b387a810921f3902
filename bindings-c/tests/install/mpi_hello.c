/* mpi_hello.c — the MPI job of the package test: every rank allocates a message with malloc, checks the
 * block is the shim's and registered (pinarena_lookup, found with dlsym: the program does not link
 * pinarena), rank 0 sends it to every other rank, which checks every byte. One line per rank:
 *   rank=R shim=0|1 registered=0|1 received=ok|bad|- memory=<OMPI_MCA_memory>
 * Exit 0 when the shim served and registered the block and every byte arrived. */
#define _GNU_SOURCE
#include <mpi.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN (1 << 20)


int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned char* buf = malloc(LEN);
  int (*lookup)(const void*, size_t, void*) = (int (*)(const void*, size_t, void*))dlsym(RTLD_DEFAULT, "pinarena_lookup");
  unsigned char region[256];
  int registered = lookup != NULL && lookup(buf, LEN, region) == 0;
  const char* received = "-";
  int ok = buf != NULL && lookup != NULL && registered;
  if (rank == 0) {
    for (size_t i = 0; i < LEN; i++) buf[i] = (unsigned char)(i * 7 + 3);
    for (int r = 1; r < size; r++) MPI_Send(buf, LEN, MPI_BYTE, r, 0, MPI_COMM_WORLD);
  } else {
    memset(buf, 0, LEN);
    MPI_Recv(buf, LEN, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    received = "ok";
    for (size_t i = 0; i < LEN; i++)
      if (buf[i] != (unsigned char)(i * 7 + 3)) { received = "bad"; ok = 0; break; }
  }
  const char* mem = getenv("OMPI_MCA_memory");
  printf("rank=%d shim=%d registered=%d received=%s memory=%s\n", rank, lookup != NULL, registered, received,
         mem ? mem : "(unset)");
  free(buf);
  MPI_Finalize();
  return ok ? 0 : 1;
}
