/* test_readonly_keys.c — a page the program made read-only, and the keys of
 * its chunk (src/shim/register.c, "refusals that may pass"). verbs and
 * io_uring pin for writing and the shim does not lift the program's
 * protection, so while such a page is read-only its chunk cannot be
 * registered: lookups give -ENODATA (a stack then registers those buffers
 * itself). Once the page is writable again — the program's mprotect, or its
 * object freed and the page reset by the shim — the next lookup registers
 * the chunk. Each test here failed while one refusal was for good. */
#define _GNU_SOURCE
#include "child.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define OBJ ((size_t)64 << 20)            /* above the largest span: a chunk of its own */
#define PAGE ((size_t)4096)

static int lookup(const void* p, size_t len) {
  pinarena_region_t r;
  int rc = pinarena_lookup(p, len, &r);
  return rc == 0 && !r.registered ? -EPROTO : rc;
}

/* A fresh object of its own chunk, written. */
static char* written_object(int fill) {
  char* p = malloc(OBJ);
  CHECK(p != NULL, "malloc(%zu)", OBJ);
  memset(p, fill, OBJ);
  return p;
}

/* After a first lookup (which makes the shim pick its registrar): 1 when
 * that registrar pins for writing, so a read-only page can refuse it. */
static int pins_for_writing(void) {
  const char* k = pinarena_registrar();
  return !strcmp(k, "io_uring") || !strcmp(k, "verbs");
}

TEST(shim_readonly_page_refuses_keys_until_writable_again) {
  char* q = written_object(1);
  int rc = lookup(q, OBJ);
  if (!pins_for_writing()) SKIP("registrar %s pins without write access: a read-only page refuses nothing", pinarena_registrar());
  CHECK(rc == 0, "a fresh chunk registers: %d", rc);
  char* p = written_object(2);
  CHECK(mprotect(p + OBJ / 2, PAGE, PROT_READ) == 0, "mprotect(PROT_READ): %s", strerror(errno));
  rc = lookup(p, PAGE);
  CHECK(rc == -ENODATA, "a chunk with a read-only page cannot be pinned for writing: lookup %d", rc);
  rc = lookup(p + OBJ - PAGE, PAGE);
  CHECK(rc == -ENODATA, "the page is still read-only: lookup %d", rc);
  CHECK(mprotect(p + OBJ / 2, PAGE, PROT_READ | PROT_WRITE) == 0, "mprotect(RW): %s", strerror(errno));
  rc = lookup(p, OBJ);
  CHECK(rc == 0, "writable again: the next lookup registers the chunk, got %d", rc);
  CHECK(lookup(q, OBJ) == 0, "the other chunk kept its registration");
  free(p);
  free(q);
}

TEST(shim_readonly_page_of_a_freed_object_takes_no_keys_from_the_next) {
  char* q = written_object(1);
  (void)lookup(q, OBJ);
  if (!pins_for_writing()) SKIP("registrar %s pins without write access: a read-only page refuses nothing", pinarena_registrar());
  char* p = written_object(2);
  CHECK(mprotect(p + 3 * PAGE, PAGE, PROT_NONE) == 0, "mprotect(PROT_NONE): %s", strerror(errno));
  int rc = lookup(p, PAGE);
  CHECK(rc == -ENODATA, "a guard page in the object: lookup %d", rc);
  free(p);                                 /* the shim resets the page (read-write) */
  char* again = malloc(OBJ);
  CHECK(again == p, "the next object of that size reuses the freed chunk (%p, freed %p)", (void*)again, (void*)p);
  memset(again, 3, OBJ);                   /* no fault: the guard page is gone */
  rc = lookup(again, OBJ);
  CHECK(rc == 0, "the next owner of the chunk gets keys: lookup %d", rc);
  free(again);
  free(q);
}

/* io_uring only: its pins are dropped around fork and made again in the
 * parent (register.c, fork), which fails over a page made read-only since
 * the chunk was registered. verbs keeps its pins across fork. */
TEST(shim_readonly_page_over_fork_keys_back_when_writable) {
  char* p = written_object(4);
  int rc = lookup(p, OBJ);
  if (strcmp(pinarena_registrar(), "io_uring") != 0)
    SKIP("registrar %s keeps its pins across fork: nothing to pin again", pinarena_registrar());
  CHECK(rc == 0, "registered before the fork: %d", rc);
  CHECK(mprotect(p + OBJ / 4, PAGE, PROT_READ) == 0, "mprotect(PROT_READ): %s", strerror(errno));
  CHECK(lookup(p, OBJ) == 0, "registered before, read-only after: the pins stay until something unpins them");
  pid_t pid = fork();
  CHECK(pid >= 0, "fork: %s", strerror(errno));
  if (pid == 0) _exit(p[OBJ - 1] == 4 ? 0 : 1);
  int st;
  CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child");
  rc = lookup(p, OBJ);
  CHECK(rc == -ENODATA, "after fork the pin over the read-only page fails: lookup %d", rc);
  CHECK(mprotect(p + OBJ / 4, PAGE, PROT_READ | PROT_WRITE) == 0, "mprotect(RW): %s", strerror(errno));
  rc = lookup(p, OBJ);
  CHECK(rc == 0, "writable again: registered again (new keys), lookup %d", rc);
  free(p);
}
