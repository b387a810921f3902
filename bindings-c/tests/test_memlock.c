/* test_memlock.c — RLIMIT_MEMLOCK accounting of pins and locks. */
#include "sent_bytes.h"
#include "kernel_view.h"

#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "reg_mlock.h"

/* Clear CAP_IPC_LOCK from the effective, permitted and inheritable sets of
   this process (a bounding-set drop alone would not affect it). */
static void drop_cap_ipc_lock(void) {
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof(d));
  if (syscall(SYS_capget, &h, d) != 0) pa_fail_call(__FILE__, __LINE__, "capget", errno);
  const unsigned bit = CAP_IPC_LOCK;    /* 14: word 0 */
  d[bit / 32].effective   &= ~(1u << (bit % 32));
  d[bit / 32].permitted   &= ~(1u << (bit % 32));
  d[bit / 32].inheritable &= ~(1u << (bit % 32));
  if (syscall(SYS_capset, &h, d) != 0) pa_fail_call(__FILE__, __LINE__, "capset", errno);
  memset(d, 0, sizeof(d));
  syscall(SYS_capget, &h, d);
  CHECK(!(d[0].effective & (1u << bit)), "CAP_IPC_LOCK still effective");
}

#define ML_LIMIT  (8 * PA_MiB)
#define ML_PIECE  (2 * PA_MiB)
#define ML_MAX    16

static uint64_t vmpin_settled(uint64_t want_kb) {
  /* the kernel unaccounts when the buffer node is released; allow it a moment */
  uint64_t kb = tu_status_kb("VmPin");
  for (int i = 0; i < 100 && kb != want_kb; i++) { usleep(10000); kb = tu_status_kb("VmPin"); }
  return kb;
}

/* The test body runs in its own forked child, so dropping capabilities and
   lowering the limit affect only this test. */
TEST(memlock_rlimit_exhaustion_and_vmpin) {
  drop_cap_ipc_lock();
  struct rlimit rl = { ML_LIMIT, ML_LIMIT };
  if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0) pa_fail_call(__FILE__, __LINE__, "setrlimit", errno);
  pa_uring_t u;
  tu_uring(&u);                                  /* created without CAP_IPC_LOCK: pins are accounted */
  const pa_backing_t k4 = PA_BACK_4K;
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(32 * PA_MiB, &k4, 1, &c));
  const uint64_t pin0 = tu_status_kb("VmPin");
  pa_uring_reg_t regs[ML_MAX];
  int n = 0, err = 0;
  for (; n < ML_MAX; n++) {
    err = pa_uring_register(&u, (char*)c.addr + (size_t)n * ML_PIECE, ML_PIECE, &regs[n]);
    if (err != 0) break;
    uint64_t pin = tu_status_kb("VmPin");
    CHECK(pin - pin0 == (uint64_t)(n + 1) * (ML_PIECE / PA_KiB), "VmPin %llu kB after %d pieces",
          (unsigned long long)pin, n + 1);
  }
  const size_t pinned = (size_t)n * ML_PIECE;
  NOTE("RLIMIT_MEMLOCK %zu MiB, no CAP_IPC_LOCK: %d pieces of 2 MiB pinned (%zu MiB), then %s; VmPin %llu kB",
       ML_LIMIT >> 20, n, pinned >> 20, err ? pa_errno_name(-err) : "no refusal", (unsigned long long)tu_status_kb("VmPin"));
  if (err != 0) pa_diag(1, "io_uring_register", err);
  CHECK(err == -ENOMEM, "expected ENOMEM from io_uring register, got %d", err);
  CHECK(tu_status_kb("VmPin") - pin0 == pinned / PA_KiB, "VmPin does not match the pinned bytes");
  /* Find the exact budget left, one 4 KiB page at a time: the limit also
     covers the ring's own pages (charged to the same user), so the refusal
     comes when pinned + ring pages + the next piece would pass the limit. */
  static pa_uring_reg_t small[ML_PIECE / 4096];
  size_t ns = 0;
  const char* top = (char*)c.addr + pinned;
  for (; ns < ML_PIECE / 4096; ns++) {
    err = pa_uring_register(&u, top + ns * 4096, 4096, &small[ns]);
    if (err != 0) break;
  }
  const size_t total = pinned + ns * 4096;
  const size_t overhead = ML_LIMIT - total;
  NOTE("topped up with %zu pages of 4 KiB: %zu KiB pinned of the %zu KiB limit; %zu KiB charged to the ring itself",
       ns, total >> 10, ML_LIMIT >> 10, overhead >> 10);
  CHECK(err == -ENOMEM, "4 KiB top-up ended with %d", err);
  CHECK(total <= ML_LIMIT && overhead <= 64 * PA_KiB,
        "refused at %zu KiB pinned, expected within 64 KiB (ring pages) of the %zu KiB limit", total >> 10, ML_LIMIT >> 10);
  CHECK(n == (int)((ML_LIMIT - overhead) / ML_PIECE), "2 MiB pieces: %d", n);
  CHECK(tu_status_kb("VmPin") - pin0 == total / PA_KiB, "VmPin %llu kB does not match %zu KiB pinned",
        (unsigned long long)tu_status_kb("VmPin"), total >> 10);
  for (size_t i = 0; i < ns; i++) CHECK_OK("unregister", pa_uring_unregister(&u, &small[i]));
  for (int i = 0; i < n; i++) CHECK_OK("unregister", pa_uring_unregister(&u, &regs[i]));
  uint64_t after = vmpin_settled(pin0);
  CHECK(after == pin0, "VmPin %llu kB after unregistering everything (leak)", (unsigned long long)after);
  CHECK(pin0 == 0, "VmPin was %llu kB before the test", (unsigned long long)pin0);
  /* the budget is usable again */
  CHECK_OK("io_uring_register", pa_uring_register(&u, c.addr, (size_t)n * ML_PIECE, &regs[0]));
  CHECK_OK("unregister", pa_uring_unregister(&u, &regs[0]));
  pa_uring_exit(&u);
  pa_os_unmap_chunk(&c);
}

TEST(mlock_vmlck_up_and_down) {
  const pa_backing_t k4 = PA_BACK_4K;
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(16 * PA_MiB, &k4, 1, &c));
  const uint64_t l0 = tu_status_kb("VmLck");
  CHECK_OK("mlock", pa_mlock_register(c.addr, 8 * PA_MiB));
  const uint64_t l1 = tu_status_kb("VmLck");
  CHECK_OK("mlock", pa_mlock_register((char*)c.addr + 8 * PA_MiB, 8 * PA_MiB));
  const uint64_t l2 = tu_status_kb("VmLck");
  CHECK_OK("munlock", pa_mlock_unregister(c.addr, 16 * PA_MiB));
  const uint64_t l3 = tu_status_kb("VmLck");
  NOTE("VmLck: %llu -> %llu -> %llu -> %llu kB", (unsigned long long)l0, (unsigned long long)l1,
       (unsigned long long)l2, (unsigned long long)l3);
  CHECK(l1 - l0 == 8192 && l2 - l0 == 16384 && l3 == l0, "VmLck did not follow mlock/munlock");
  CHECK(tu_status_kb("VmPin") == 0, "mlock must not count as a pin (VmPin)");
  CHECK_ERR(pa_mlock_register(c.addr, 0), EINVAL);
  /* over the limit without CAP_IPC_LOCK */
  drop_cap_ipc_lock();
  struct rlimit rl = { 4 * PA_MiB, 4 * PA_MiB };
  CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0, "setrlimit");
  CHECK_ERR(pa_mlock_register(c.addr, 8 * PA_MiB), ENOMEM);
  CHECK(tu_status_kb("VmLck") == l0, "refused mlock left pages locked");
  pa_os_unmap_chunk(&c);
}
