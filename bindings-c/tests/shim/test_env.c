/* test_env.c — settings read from the environment at start-up, checked
 * through a probe process run under LD_PRELOAD. */
#include "child.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[16384];

static char* probe(void) {
  static char path[512];
  snprintf(path, sizeof(path), "%s/pinarena-shim-probe", getenv("PINARENA_BUILD") ? getenv("PINARENA_BUILD") : ".");
  return path;
}

TEST(shim_env_pin_cap_keeps_serving_unregistered) {
  char* argv[] = { probe(), "40", NULL };
  const char* env[] = { "PINARENA_MAX_PINNED=8M", "PINARENA_CHUNK_SIZE=4M", "PINARENA_VERBOSE=1", NULL };
  int rc = su_exec(argv, env, out, sizeof(out));
  CHECK(rc == 0, "probe exit %d: %s", rc, out);
  CHECK(strstr(out, "unregistered_blocks=0") == NULL, "nothing was unregistered: %s", out);
  CHECK(strstr(out, "registered_chunks=2 ") != NULL, "8 MiB cap = two 4 MiB chunks registered: %s", out);
  const char* w = strstr(out, "could not register");
  CHECK(w != NULL && strstr(w + 1, "could not register") == NULL, "with PINARENA_VERBOSE, the notice appears exactly once: %s", out);
  /* the cap's refusal passes once pinned memory is released: the notice must not call it final */
  CHECK(strstr(w, "tried again") != NULL && strstr(w, "from here on") == NULL,
        "a cap refusal is retried, but the notice says otherwise: %s", out);
  NOTE("%s", strtok(out, "\n"));
}

TEST(shim_env_registrar_none_and_mlock) {
  char* argv[] = { probe(), "4", NULL };
  const char* env1[] = { "PINARENA_REGISTRAR=none", NULL };
  CHECK(su_exec(argv, env1, out, sizeof(out)) == 0, "probe none: %s", out);
  CHECK(strstr(out, "registrar=none") && strstr(out, "registered_blocks=0 "), "none: %s", out);
  CHECK(strstr(out, "could not register") == NULL, "registrar none is not a failure to report: %s", out);
  const char* env2[] = { "PINARENA_REGISTRAR=mlock", NULL };
  CHECK(su_exec(argv, env2, out, sizeof(out)) == 0, "probe mlock: %s", out);
  CHECK(strstr(out, "registrar=mlock") && strstr(out, "unregistered_blocks=0"), "mlock: %s", out);
  const char* env3[] = { "PINARENA_REGISTRAR=io_uring", "PINARENA_CHUNK_SIZE=8M", "PINARENA_PAGES=4k", NULL };
  CHECK(su_exec(argv, env3, out, sizeof(out)) == 0, "probe io_uring: %s", out);
  CHECK(strstr(out, "registrar=io_uring") && strstr(out, "chunk_bytes=8388608") && strstr(out, "unregistered_blocks=0"), "io_uring 8M: %s", out);
}

TEST(shim_env_stats_file) {
  char path[] = "/tmp/pinarena-stats-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  char env_s[600];
  snprintf(env_s, sizeof(env_s), "PINARENA_STATS=%s", path);
  char* argv[] = { "sh", "-c", "echo hello | cat > /dev/null", NULL };
  const char* env[] = { env_s, NULL };
  CHECK(su_exec(argv, env, out, sizeof(out)) == 0, "sh: %s", out);
  FILE* f = fopen(path, "r");
  size_t n = fread(out, 1, sizeof(out) - 1, f);
  out[n] = 0;
  fclose(f);
  unlink(path);
  CHECK(strstr(out, "exe=/usr/bin/cat") != NULL && strstr(out, "small_mallocs=") != NULL, "stats: %s", out);
}
