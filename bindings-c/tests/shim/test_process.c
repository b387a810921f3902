/* test_process.c — the process resources the shim shares with the program
 * it is preloaded into: descriptors (its io_uring ring, stderr), the
 * address-space limit, and the environment it reads. */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char out[16384];

static char* probe(void) {
  static char path[512];
  snprintf(path, sizeof(path), "%s/pinarena-shim-probe", getenv("PINARENA_BUILD") ? getenv("PINARENA_BUILD") : ".");
  return path;
}

/* ---- the io_uring ring's descriptor ------------------------------------ */

/* In a child (its own registrar: the parent's ring is not inherited): a
 * registered chunk, then every descriptor >= 3 closed as daemons do and the
 * numbers reused by a data file, then another chunk. The first chunk's keys
 * belonged to a ring the shim can no longer reach. */
static void close_everything(void* arg) {
  (void)arg;
  char* a = malloc(9 << 20);                  /* a chunk of its own (not one inherited), registered now */
  pinarena_region_t r;
  if (pinarena_lookup(a, 1, &r) != 0 || strcmp(pinarena_registrar(), "io_uring") != 0) _exit(10);
  struct rlimit nf;
  getrlimit(RLIMIT_NOFILE, &nf);
  int data = open("/dev/zero", O_RDONLY);
  for (int fd = 3; fd < (int)nf.rlim_cur && fd < 65536; fd++) if (fd != data) dup2(data, fd);   /* closed and reused */
  char* b = malloc(9 << 20);                  /* another chunk: the shim must notice */
  memset(b, 1, 9 << 20);
  int rb = pinarena_lookup(b, 1, &r);         /* registers b (lazily): the shim notices the ring is gone */
  int ra = pinarena_lookup(a, 1, &r);
  dprintf(2, "old chunk lookup %d, new chunk lookup %d, registrar %s\n", ra, rb, pinarena_registrar());
  if (ra == 0) _exit(1);                      /* keys of a registration the shim lost */
  if (rb == 0) _exit(2);
  if (strstr(pinarena_registrar(), "lost") == NULL) _exit(3);
  _exit(0);
}

static void need_io_uring(void) {
  /* asking for the PD chooses the registrar (no chunk registered: a forked
     child's chunks are its own; inherited ones stay unregistered in it) */
  (void)pinarena_pd();
  if (strcmp(pinarena_registrar(), "io_uring") != 0) SKIP("registrar %s: the ring tests need io_uring", pinarena_registrar());
}

TEST(shim_process_ring_closed_by_the_program_is_noticed) {
  need_io_uring();
  su_result_t r = su_run(close_everything, NULL);
  CHECK(!r.signaled && r.status == 0, "signal %d, status %d (1: old keys still reported, 2: new chunk registered, "
        "3: stats silent; 10: setup): %s", r.sig, r.status, r.err);
  NOTE("%s", strtok(r.err, "\n"));
}

/* The ring's descriptor: above the low numbers programs expect, and closed
 * on exec. */
static void ring_fd_flags(void* arg) {
  (void)arg;
  char* a = malloc(9 << 20);                  /* a chunk of the child's own: its own ring */
  memset(a, 0, 9 << 20);
  pinarena_region_t r;
  pinarena_lookup(a, 1, &r);                  /* registered (lazily, on lookup): the ring is opened */
  char link[64], target[128];
  for (int fd = 0; fd < 4096; fd++) {
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (strstr(target, "io_uring") == NULL) continue;
    int fl = fcntl(fd, F_GETFD);
    dprintf(2, "ring fd %d cloexec %d\n", fd, (fl & FD_CLOEXEC) != 0);
    _exit(fd >= 256 && (fl & FD_CLOEXEC) ? 0 : 1);
  }
  _exit(2);
}

TEST(shim_process_ring_fd_high_and_cloexec) {
  need_io_uring();
  su_result_t r = su_run(ring_fd_flags, NULL);
  CHECK(!r.signaled && r.status == 0, "status %d: %s", r.status, r.err);
  NOTE("%s", strtok(r.err, "\n"));
}

/* ---- messages ------------------------------------------------------------ */

/* Registration refused (pin cap) with fd 2 closed and reused by a data
 * file: nothing of ours may land in the file, with or without
 * PINARENA_VERBOSE. */
TEST(shim_process_no_message_into_a_reused_stderr) {
  char path[] = "/tmp/pinarena-data-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  close(fd);
  char* argv[] = { probe(), "8", "reopen-stderr", path, NULL };   /* closes 2, opens the file as 2 */
  const char* env[] = { "PINARENA_MAX_PINNED=2M", "PINARENA_CHUNK_SIZE=2M", "PINARENA_VERBOSE=1", NULL };
  int rc = su_exec(argv, env, out, sizeof out);
  CHECK(rc == 0, "probe exit %d: %s", rc, out);
  char data[4096];
  int df = open(path, O_RDONLY);
  ssize_t n = read(df, data, sizeof data - 1);
  close(df);
  unlink(path);
  data[n > 0 ? n : 0] = 0;
  CHECK(strstr(out, "unregistered_chunks=0 ") == NULL, "the cap refused a registration: %s", out);
  CHECK(strstr(data, "pinarena") == NULL, "the shim wrote into the program's data file: '%s'", data);
  CHECK(strcmp(data, "probe data\n") == 0, "data file: '%s'", data);
}

/* No noise by default: a refused registration (cap reached) prints nothing
 * without PINARENA_VERBOSE, and one line with it. */
TEST(shim_process_quiet_by_default) {
  char* argv[] = { probe(), "12", NULL };
  const char* env[] = { "PINARENA_MAX_PINNED=4M", "PINARENA_CHUNK_SIZE=4M", NULL };
  CHECK(su_exec(argv, env, out, sizeof out) == 0, "probe: %s", out);
  CHECK(strstr(out, "unregistered_chunks=0 ") == NULL, "the cap refused a registration: %s", out);
  CHECK(strstr(out, "could not register") == NULL, "a notice without PINARENA_VERBOSE: %s", out);
  const char* envv[] = { "PINARENA_MAX_PINNED=4M", "PINARENA_CHUNK_SIZE=4M", "PINARENA_VERBOSE=1", NULL };
  CHECK(su_exec(argv, envv, out, sizeof out) == 0, "probe: %s", out);
  const char* w = strstr(out, "could not register");
  CHECK(w != NULL && strstr(w + 1, "could not register") == NULL, "with PINARENA_VERBOSE, exactly one notice: %s", out);
}

/* ---- RLIMIT_AS ----------------------------------------------------------- */

TEST(shim_process_runs_under_an_address_space_limit) {
  const char* limits[] = { "580000", "300000" };
  for (int i = 0; i < 2; i++) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ulimit -v %s && /bin/true && %s 16", limits[i], probe());
    char* argv[] = { "sh", "-c", cmd, NULL };
    int rc = su_exec(argv, NULL, out, sizeof out);
    CHECK(rc == 0, "ulimit -v %s: exit %d: %s", limits[i], rc, out);
    CHECK(strstr(out, "registered_blocks=16 ") != NULL || strstr(out, "unregistered_blocks=0") != NULL,
          "ulimit -v %s: the probe's 16 MiB: %s", limits[i], out);
  }
}

/* ---- PINARENA_MAX_PINNED ------------------------------------------------- */

static void probe_with(const char* cap, int mib) {
  char e[128], m[16];
  snprintf(e, sizeof e, "PINARENA_MAX_PINNED=%s", cap);
  snprintf(m, sizeof m, "%d", mib);
  char* argv[] = { probe(), m, NULL };
  const char* env[] = { e, "PINARENA_CHUNK_SIZE=4M", NULL };
  CHECK(su_exec(argv, env, out, sizeof out) == 0, "probe %s: %s", cap, out);
}

TEST(shim_process_max_pinned_units) {
  probe_with("1T", 8);                        /* 1 TiB: no chunk refused */
  CHECK(strstr(out, "unregistered_chunks=0 ") != NULL && strstr(out, "pinarena: PINARENA_MAX_PINNED") == NULL, "1T: %s", out);
  probe_with("0.5G", 8);                      /* 512 MiB */
  CHECK(strstr(out, "unregistered_chunks=0 ") != NULL && strstr(out, "pinarena: PINARENA_MAX_PINNED") == NULL, "0.5G: %s", out);
  probe_with("6291456", 12);                  /* 6 MiB in bytes: one 4 MiB chunk, the next would pass it */
  CHECK(strstr(out, "registered_chunks=1 ") != NULL, "6291456: %s", out);
  probe_with("0.0078125G", 12);               /* 8 MiB: two chunks */
  CHECK(strstr(out, "registered_chunks=2 ") != NULL, "0.0078125G: %s", out);
  probe_with("4MiB", 12);
  CHECK(strstr(out, "registered_chunks=1 ") != NULL, "4MiB: %s", out);
}

/* A chunk the cap refused registers once there is room: blocks of the
 * registered chunk freed, that chunk trimmed (its pins go), the refused
 * blocks looked up again (register.c, "refusals that may pass"). */
TEST(shim_process_max_pinned_refused_chunk_registers_after_trim) {
  char* argv[] = { probe(), "12", "trim-retry", NULL };
  const char* env[] = { "PINARENA_MAX_PINNED=4M", "PINARENA_CHUNK_SIZE=4M", NULL };
  CHECK(su_exec(argv, env, out, sizeof out) == 0, "probe: %s", out);
  CHECK(strstr(out, "registered_chunks=") != NULL, "no stats line: %s", out);
  const char* t = strstr(out, "trimmed=");
  CHECK(t != NULL && strtoul(t + 8, NULL, 10) > 0, "the registered chunk was not trimmed: %s", out);
  const char* a = strstr(out, "after_trim_registered=");
  CHECK(a != NULL && atoi(a + 22) > 0, "no refused block registered with the room trim made: %s", out);
  NOTE("%s", a);
}

TEST(shim_process_max_pinned_refuses_what_is_not_a_size) {
  const char* bad[] = { "abc", "12Q", "1..5G", "-4M", "" };
  for (int i = 0; i < 5; i++) {
    probe_with(bad[i], 4);
    const char* l = strstr(out, "pinarena: PINARENA_MAX_PINNED");
    CHECK(l != NULL, "'%s' taken silently: %s", bad[i], out);
    CHECK(strstr(l + 1, "pinarena: PINARENA_MAX_PINNED") == NULL, "'%s': one line: %s", bad[i], out);
    CHECK(strstr(l, "no cap") != NULL, "'%s': says what was assumed: %s", bad[i], out);
    CHECK(strstr(out, "unregistered_chunks=0 ") != NULL, "'%s': no cap: %s", bad[i], out);
  }
}
