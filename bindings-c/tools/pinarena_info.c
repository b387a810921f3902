/* pinarena_info.c — `pinarena info`: what the shim does on this machine, as ucx_info does for UCX, with no
 * JDK. Linked to libpinarena.so (its malloc is this program's), it asks the shim through pinarena.h
 * (registrar, stats, remote keys) and reads what the shim reads to choose (its environment, the RDMA
 * devices, the page pools, RLIMIT_MEMLOCK) to say why. One "key: value" line each:
 *   version, library, registrar, registrar_why, register, pages, thp, hugetlb_2m, memlock, max_pinned,
 *   registered, remote_keys, remote_keys_why
 * Exit 0; 1 when the shim is not the process's allocator (the registrar never leaves "pending"). */
#define _GNU_SOURCE
#include "pinarena.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#ifndef PINARENA_VERSION
#define PINARENA_VERSION "unknown"
#endif

static const char* env_or(const char* name, const char* dflt) {
  const char* v = getenv(name);
  return v != NULL && *v ? v : dflt;
}

/* The RDMA devices the auto registrar looks for, comma-separated into buf ("" when none). */
static const char* rdma_devices(char* buf, size_t cap) {
  buf[0] = 0;
  DIR* d = opendir("/sys/class/infiniband");
  if (d == NULL) return buf;
  struct dirent* e;
  size_t n = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    int w = snprintf(buf + n, cap - n, "%s%s", n ? "," : "", e->d_name);
    if (w < 0 || (size_t)w >= cap - n) break;
    n += (size_t)w;
  }
  closedir(d);
  return buf;
}

/* The first line of a file into buf, without its newline ("?" when unreadable). */
static const char* first_line(const char* path, char* buf, size_t cap) {
  FILE* f = fopen(path, "r");
  if (f == NULL || fgets(buf, (int)cap, f) == NULL) snprintf(buf, cap, "?");
  if (f != NULL) fclose(f);
  buf[strcspn(buf, "\n")] = 0;
  return buf;
}

static unsigned long meminfo(const char* key) {
  FILE* f = fopen("/proc/meminfo", "r");
  char line[128];
  unsigned long v = 0;
  size_t klen = strlen(key);
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, key, klen) == 0 && line[klen] == ':') { v = strtoul(line + klen + 1, NULL, 10); break; }
  if (f != NULL) fclose(f);
  return v;
}

static void print_limit(const char* key, rlim_t v) {
  if (v == RLIM_INFINITY) printf("%s=unlimited", key);
  else printf("%s=%llu KiB", key, (unsigned long long)v >> 10);
}

static const char* registrar_why(const char* reg, const char* devs) {
  static char why[512];
  const char* asked = getenv("PINARENA_REGISTRAR");
  if (asked != NULL && *asked && strcmp(asked, "auto") != 0) {
    snprintf(why, sizeof why, "PINARENA_REGISTRAR=%s%s", asked,
             strcmp(asked, reg) == 0 ? "" : " was asked for and could not be set up");
  } else if (strcmp(reg, "verbs") == 0) {
    snprintf(why, sizeof why, "auto: RDMA device(s) %s", devs);
  } else if (strcmp(reg, "io_uring") == 0) {
    snprintf(why, sizeof why, "auto: %s", *devs ? "the RDMA device(s) could not be opened (libibverbs.so.1, "
             "provider, permissions), io_uring fixed buffers pin instead" : "no RDMA device in /sys/class/infiniband, "
             "io_uring fixed buffers pin the pages");
  } else if (strcmp(reg, "mlock") == 0) {
    snprintf(why, sizeof why, "auto: no usable RDMA device and io_uring refused (kernel.io_uring_disabled, "
             "seccomp or an old kernel): mlock keeps the pages resident");
  } else {
    snprintf(why, sizeof why, "%s", strcmp(reg, "pending") == 0 ? "the shim is not this process's allocator"
             : "PINARENA_REGISTRAR or a failed setup");
  }
  return why;
}

int main(void) {
  Dl_info dl;
  const char* lib = dladdr((void*)pinarena_registrar, &dl) && dl.dli_fname ? dl.dli_fname : "?";
  /* The first lookup chooses the registrar, as a program's first communication would. */
  char* probe = malloc(4096);
  pinarena_region_t region;
  int found = probe != NULL ? pinarena_lookup(probe, 4096, &region) : -1;
  const char* reg = pinarena_registrar();
  char devs[256], thp[128];
  rdma_devices(devs, sizeof devs);

  printf("version: %s\n", PINARENA_VERSION);
  printf("library: %s\n", lib);
  printf("registrar: %s\n", reg);
  printf("registrar_why: %s\n", registrar_why(reg, devs));
  printf("rdma_devices: %s\n", *devs ? devs : "none");
  printf("register: %s (PINARENA_REGISTER: lazy registers a chunk on its first lookup, eager when mapped)\n",
         env_or("PINARENA_REGISTER", "lazy"));
  printf("pages: %s (PINARENA_PAGES: auto, thp, 4k or hugetlb)\n", env_or("PINARENA_PAGES", "auto"));
  printf("thp: %s\n", first_line("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp));
  printf("hugetlb_2m: %lu free of %lu\n", meminfo("HugePages_Free"), meminfo("HugePages_Total"));
  struct rlimit rl;
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    printf("memlock: ");
    print_limit("soft", rl.rlim_cur);
    printf(" ");
    print_limit("hard", rl.rlim_max);
    printf("%s\n", rl.rlim_cur != RLIM_INFINITY && strcmp(reg, "verbs") != 0 && strcmp(reg, "none") != 0
           ? " (io_uring and mlock pins count against the soft limit without CAP_IPC_LOCK)" : "");
  }
  printf("max_pinned: %s (PINARENA_MAX_PINNED: chunks past it are served unregistered)\n",
         env_or("PINARENA_MAX_PINNED", "no cap"));
  pinarena_stats_t st;
  if (pinarena_get_stats(&st) == 0)
    printf("registered: %llu chunks, %llu bytes (this probe: %s)\n", (unsigned long long)st.registered_chunks,
           (unsigned long long)st.registered_bytes, found == 0 ? "registered" : "not registered");
  /* Remote keys are chosen at the first remote allocation; only verbs makes them. */
  if (strcmp(reg, "verbs") == 0) {
    void* r = pinarena_alloc_remote(4096, PINARENA_REMOTE_READ);
    if (r != NULL) pinarena_free_remote(r);
  }
  const char* keys = pinarena_remote_keys();
  const char* kwhy = pinarena_remote_keys_why();
  printf("remote_keys: %s\n", keys);
  printf("remote_keys_why: %s\n", *kwhy ? kwhy : strcmp(reg, "verbs") != 0
         ? "the registrar is not verbs: no remote keys" : "windows, as asked (PINARENA_REMOTE_KEYS)");
  free(probe);
  return strcmp(reg, "pending") == 0 ? 1 : 0;
}
