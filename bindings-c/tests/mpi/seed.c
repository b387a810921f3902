/* seed.c — the stale-registration hazard in a real MPI, two ranks.
 *
 *   mpirun -np 2 pinarena-mpi-seed MODE[,MODE...] SIZE...
 *
 * For each MODE in turn and each SIZE, rank 0 gets a buffer, fills it with 'A', sends it, gives it back, gets
 * a buffer of the same size again (which must land at the same address, or the run proves nothing and fails),
 * fills it with 'B' and sends again. Rank 1 receives each message into one buffer it keeps and counts the
 * bytes that are not the letter rank 0 wrote.
 *
 *   malloc    malloc/free: what an application does. glibc unmaps a large block on free (the MPI's memory
 *             hooks see that unmap); libpinarena.so keeps the block registered and mapped.
 *   munmap    mmap and munmap: foreign memory the program maps and unmaps itself, through the symbol every
 *             hook (the MPI's, the shim's) sees; the second mmap asks for the same address.
 *   rawunmap  mmap and syscall(SYS_munmap): the pages leave by a path no symbol hook can see, so a
 *             registration cache keyed by address keeps the old registration — the hazard itself.
 *   mremap    mmap; the second buffer is another mapping moved onto the first's address (mremap
 *             MREMAP_FIXED): new pages at the same address.
 *   fixed     mmap; the second buffer is mmap(MAP_FIXED) over the first: new zero pages in place.
 *   dontneed  mmap; madvise(MADV_DONTNEED) on it: the next touch faults in new zero pages.
 *   shmdt     System V shared memory: shmat, shmdt, and a new segment attached at the same address.
 *   fork      mmap; the rank forks a child that exits at once; the second buffer is the same memory.
 *
 * One line per message on rank 0's stdout, read by tests/mpi/run.sh:
 *   seed mode=M size=N send=K letter=A addr_reused=1 bad=0 sent_pkts=P regs=R deregs=D addr=X
 * sent_pkts: rxe0's sent-packet counter grew by this much over the send and rank 1's check (both ranks sit
 * on rxe0, so this counts the whole transfer). regs/deregs: memory registrations rank 0 made and dropped
 * since the end of the previous send, the free and malloc before this one included (libpinarena-regcount.so
 * preloaded; -1 without it): 0 registrations = a cache hit.
 * Each rank also prints "rank=R pid=P" (to match the MPI library's own per-process logs) and its
 * "unpatched ..." line (unpatched.h: libc's mmap family as on disk, or rewritten); rank 0 ends with
 * "stack_events ucm=N": ranges the shim reported to UCX through ucm_vm_munmap (-1: the shim does not feed UCX),
 * then "stack_events ofi=N subscribed=S": cached ranges an unmap voided (-1: not fed) and ranges its
 * MR cache subscribed to the shim's monitor.
 * Exit status 0 whatever the data (judging is the caller's), 1 if the address was not reused.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "regcount.h"
#include "rxe_counter.h"
#include "unpatched.h"

enum { TAG_DATA = 1, TAG_RESULT = 2 };

enum { MODE_MALLOC, MODE_MUNMAP, MODE_RAWUNMAP, MODE_MREMAP, MODE_FIXED, MODE_DONTNEED, MODE_SHMDT, MODE_FORK };
static const char* const mode_names[] = {"malloc", "munmap", "rawunmap", "mremap", "fixed", "dontneed", "shmdt",
                                         "fork"};

static void* fresh_map(size_t size, void* want, int flags) {
  void* p = mmap(want, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* A new segment, marked for removal at once (it goes when detached). */
static void* shm_attach(size_t size, void* want) {
  int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
  if (id < 0) return NULL;
  void* p = shmat(id, want, 0);
  shmctl(id, IPC_RMID, NULL);
  return p == (void*)-1 ? NULL : p;
}

/* The rank forks a child that leaves at once; the parent keeps its memory (and its registrations): the
 * pages it writes next must be the ones the stack registered. (A kernel that shares pinned pages
 * copy-on-write would give the parent new frames at its next write; one that copies pinned pages for the
 * child at fork, as the guest's 6.1 does, keeps them.) */
static void fork_child(void) {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, NULL, 0);
  else perror("fork");
}

/* The first buffer (want NULL) or the second, at want, where the first was. */
static void* get_buffer(int mode, size_t size, void* want) {
  switch (mode) {
    case MODE_MALLOC: return malloc(size);
    case MODE_SHMDT: return shm_attach(size, want);
    case MODE_MREMAP: {
      if (!want) return fresh_map(size, NULL, 0);
      void* other = fresh_map(size, NULL, 0);
      if (!other) return NULL;
      void* p = mremap(other, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, want);
      return p == MAP_FAILED ? NULL : p;
    }
    case MODE_FIXED: return fresh_map(size, want, want ? MAP_FIXED : 0);
    case MODE_DONTNEED:
      if (!want) return fresh_map(size, NULL, 0);
      return madvise(want, size, MADV_DONTNEED) == 0 ? want : NULL;
    case MODE_FORK: return want ? want : fresh_map(size, NULL, 0);
    default: return fresh_map(size, want, want ? MAP_FIXED_NOREPLACE : 0);
  }
}

/* Gives a buffer back; the first buffer of mremap/fixed/dontneed stays for the second to replace. */
static void put_buffer(int mode, void* p, size_t size, int last) {
  switch (mode) {
    case MODE_MALLOC: free(p); return;
    case MODE_SHMDT: shmdt(p); return;
    /* Not munmap(): the MPI's hooks patch that symbol. The raw system call goes around every hook. */
    case MODE_RAWUNMAP: syscall(SYS_munmap, p, size); return;
    case MODE_MUNMAP: munmap(p, size); return;
    case MODE_FORK:
      if (!last) fork_child();
      else munmap(p, size);
      return;
    default: if (last) munmap(p, size); return;
  }
}

struct send_result {
  long bad, pkts, regs, deregs;
};

/* Registrations counted up to the end of the previous send: each send's window covers the free and malloc
 * before it, where an invalidation happens. */
static struct regcount last_count;

/* Rank 0: one message of `size` bytes of `letter` from p; rank 1 answers with the bad-byte count. */
static struct send_result send_checked(char* p, size_t size, char letter) {
  memset(p, letter, size);
  uint64_t before = rxe_sent_pkts();
  MPI_Send(p, (int)size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
  struct send_result res = {.bad = -1};
  MPI_Recv(&res.bad, 1, MPI_LONG, 1, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  res.pkts = (long)(rxe_sent_pkts() - before);
  struct regcount now;
  int counted = regcount_now(&now);
  res.regs = counted ? (long)(now.regs - last_count.regs) : -1;
  res.deregs = counted ? (long)(now.deregs - last_count.deregs) : -1;
  last_count = now;
  return res;
}

static void report(const char* mode, size_t size, int send, char letter, int reused, const struct send_result* r,
                   const void* addr) {
  printf("seed mode=%s size=%zu send=%d letter=%c addr_reused=%d bad=%ld sent_pkts=%ld regs=%ld deregs=%ld addr=%p\n",
         mode, size, send, letter, reused, r->bad, r->pkts, r->regs, r->deregs, addr);
  fflush(stdout);
}

static void receive_checked(char* buf, size_t size, char letter) {
  MPI_Recv(buf, (int)size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  long bad = 0;
  for (size_t i = 0; i < size; i++) bad += buf[i] != letter;
  MPI_Send(&bad, 1, MPI_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  /* MODE[,MODE...]: every SIZE for each mode in turn, in one job */
  int modes[8], nmodes = 0;
  char* list = argc >= 2 ? strdup(argv[1]) : NULL;
  for (char* tok = list ? strtok(list, ",") : NULL; tok && nmodes >= 0; tok = strtok(NULL, ",")) {
    int mode = -1;
    for (int m = 0; m < (int)(sizeof mode_names / sizeof mode_names[0]); m++)
      if (!strcmp(tok, mode_names[m])) mode = m;
    if (mode < 0 || nmodes == 8) nmodes = -1;
    else modes[nmodes++] = mode;
  }
  if (ranks != 2 || argc < 3 || nmodes <= 0) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np 2 %s MODE[,MODE...] SIZE... "
              "(MODE: malloc munmap rawunmap mremap fixed dontneed shmdt fork)\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  printf("rank=%d pid=%d\n", rank, (int)getpid());
  fflush(stdout);
  unpatched_report(rank);   /* after MPI_Init: every stack has installed whatever hooks it installs */
  int status = 0;
  regcount_now(&last_count);
  for (int k = 0; k < nmodes; k++) {
    int mode = modes[k];
    const char* name = mode_names[mode];
    for (int a = 2; a < argc; a++) {
      size_t size = strtoull(argv[a], NULL, 0);
      if (rank == 1) {
        char* buf = malloc(size);
        if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
        receive_checked(buf, size, 'A');
        receive_checked(buf, size, 'B');
        free(buf);
        continue;
      }
      char* first = get_buffer(mode, size, NULL);
      if (!first) { perror("first buffer"); MPI_Abort(MPI_COMM_WORLD, 1); }
      struct send_result r = send_checked(first, size, 'A');
      report(name, size, 1, 'A', 1, &r, first);
      put_buffer(mode, first, size, 0);
      char* second = get_buffer(mode, size, first);
      if (!second) { perror("second buffer"); MPI_Abort(MPI_COMM_WORLD, 1); }
      int reused = second == first;
      if (!reused) status = 1;
      r = send_checked(second, size, 'B');
      report(name, size, 2, 'B', reused, &r, second);
      put_buffer(mode, second, size, 1);
    }
  }
  free(list);
  /* How many unmapped ranges the shim handed UCX (src/shim/stack_events.c); -1: it does not feed UCX. */
  long (*fed)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ucm");
  if (rank == 0) printf("stack_events ucm=%ld\n", fed ? fed() : -1L);
  /* The same for libfabric (src/shim/stack_ofi.c), and how many ranges its MR cache subscribed. */
  long (*ofi)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ofi");
  long (*subs)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ofi_subscribed");
  if (rank == 0) printf("stack_events ofi=%ld subscribed=%ld\n", ofi ? ofi() : -1L, subs ? subs() : -1L);
  MPI_Finalize();
  return status;
}
