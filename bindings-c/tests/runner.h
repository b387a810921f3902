/* runner.h — a tiny test registry: TEST(name) { ... } puts a descriptor in
 * the "pa_tests" linker section; the runner forks one child per test. */
#ifndef PA_RUNNER_H
#define PA_RUNNER_H

#include <stddef.h>
#include <stdint.h>

typedef struct pa_test_s {
  const char* name;
  void (*fn)(void);
} pa_test_t;

#define TEST(tname) \
  static void tname(void); \
  static const pa_test_t pa_test_desc_##tname \
    __attribute__((used, section("pa_tests"), aligned(sizeof(void*)))) = { #tname, tname }; \
  static void tname(void)

/* Fail / skip: report the reason to the runner and end the test child. */
__attribute__((noreturn, format(printf, 3, 4)))
void pa_fail(const char* file, int line, const char* fmt, ...);
__attribute__((noreturn, format(printf, 1, 2)))
void pa_skip(const char* fmt, ...);
__attribute__((noreturn))
void pa_fail_call(const char* file, int line, const char* call, int err);
/* CLOCK_MONOTONIC in seconds (the runner times each test with it). */
double pa_test_now(void);
/* Informational line in the test's output. */
__attribute__((format(printf, 1, 2)))
void pa_note(const char* fmt, ...);

#define CHECK(cond, fmt, ...) \
  do { if (!(cond)) pa_fail(__FILE__, __LINE__, "CHECK(%s): " fmt, #cond, ##__VA_ARGS__); } while (0)
/* expr returns 0 / a non-negative value on success, -errno on failure. */
#define CHECK_OK(call, expr) \
  do { long _r = (long)(expr); if (_r < 0) pa_fail_call(__FILE__, __LINE__, call, (int)-_r); } while (0)
#define CHECK_ERR(expr, want) \
  do { long _r = (long)(expr); if (_r != -(long)(want)) \
    pa_fail(__FILE__, __LINE__, "%s: expected -%s, got %ld (%s)", #expr, pa_errno_name(want), _r, \
            _r < 0 ? pa_errno_name((int)-_r) : "success"); } while (0)
#define SKIP(...) pa_skip(__VA_ARGS__)
#define NOTE(...) pa_note(__VA_ARGS__)

#endif
