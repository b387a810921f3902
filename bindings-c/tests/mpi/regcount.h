/* regcount.h — what libpinarena-regcount.so counts, and how a program reads it without linking it. */
#ifndef PINARENA_MPI_REGCOUNT_H
#define PINARENA_MPI_REGCOUNT_H

#include <dlfcn.h>
#include <stdint.h>

struct regcount {
  uint64_t regs;       /* successful ibv_reg_mr / ibv_reg_mr_iova / ibv_reg_mr_iova2 */
  uint64_t reg_bytes;  /* their lengths, summed */
  uint64_t deregs;     /* successful ibv_dereg_mr */
};

/* The counts so far; 0 when the library is not preloaded (then *out is all ones). */
static inline int regcount_now(struct regcount* out) {
  void (*read)(struct regcount*) = (void (*)(struct regcount*))dlsym(RTLD_DEFAULT, "regcount_read");
  if (!read) { out->regs = out->reg_bytes = out->deregs = UINT64_MAX; return 0; }
  read(out);
  return 1;
}

#endif
