/* child.h — the shim tests' child processes: run a snippet in a child and
 * capture how it ended and what it wrote on stderr, or run a program under
 * LD_PRELOAD of the shim. */
#ifndef PA_SHIM_CHILD_H
#define PA_SHIM_CHILD_H
#include "runner.h"
#include "pinarena.h"

#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

typedef struct { int signaled, sig, status; char err[4096]; } su_result_t;

/* fork; child: stderr -> pipe, fn(arg), _exit(0). */
su_result_t su_run(void (*fn)(void*), void* arg);
/* fn(NULL) in a child (su_run) must end with status 0; else fail, naming `what`. */
void su_child_ok(void (*fn)(void*), const char* what);
/* In such a child: on failure write the message to stderr (the parent quotes it) and exit 1. */
#define CHILD_CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); _exit(1); } } while (0)
/* In such a child: fill n bytes at q with c, fork, and the grandchild must read them back (it fails the
 * child if it dies, e.g. on memory left MADV_DONTFORK, or sees other bytes, e.g. MADV_WIPEONFORK). */
void su_fork_reads(char* q, size_t n, char c);
/* The program's calls that would unmap or replace 1 MiB at p (for su_expect_abort). */
void su_munmap_mib(void* p);
void su_mmap_fixed_mib(void* p);
void su_mremap_mib(void* p);
/* Expect abort (SIGABRT) with `want` and the pointer in hex in stderr. */
void su_expect_abort(void (*fn)(void*), void* arg, const char* want, const void* ptr);
/* Run argv with extra env (NULL-terminated "K=V" list) under LD_PRELOAD of the shim; capture out+err. */
int su_exec(char* const argv[], const char* const env[], char* out, size_t cap);
/* The same, calling prepare() in the child just before exec (limits, capabilities; it may _exit). */
int su_exec_prepared(char* const argv[], const char* const env[], void (*prepare)(void), char* out, size_t cap);
const char* su_so(void);
/* An RDMA device is listed under /sys/class/infiniband. */
int su_rdma_device_present(void);
#endif
