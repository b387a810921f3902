/* diag.h — the one place that turns an error into words.
 *
 * Library functions return -errno and never print. Callers that want a
 * message (the tests and tools) use these: the errno name,
 * and a likely fix for the calls pinarena makes. Output goes through write(2)
 * only, so it is safe inside an allocator.
 */
#ifndef PA_DIAG_H
#define PA_DIAG_H

/* "ENOMEM", "EFAULT", ...; "E?" for unknown. `err` is a positive errno. */
const char* pa_errno_name(int err);

/* Likely fix for `err` returned by `call` (e.g. "io_uring_register",
 * "mmap hugetlb", "pagemap"), or "" when there is no better advice. */
const char* pa_diag_hint(const char* call, int err);

/* Write "<call>: <ENAME> (<n>): <hint>\n" to fd. */
void pa_diag(int fd, const char* call, int err);

#endif
