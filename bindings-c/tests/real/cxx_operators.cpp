// C++'s operator new and delete under the shim (src/shim/cxx.c), run by tests/real/run.sh under
// LD_PRELOAD=libpinarena.so. Each check prints FAIL and the run exits 1 if it does not hold:
//   - every form of new and delete the Itanium ABI names resolves to libpinarena.so;
//   - objects of every form are usable, aligned as asked, and come back through delete;
//   - a request no allocator can meet calls the new-handler, then throws std::bad_alloc;
//     the nothrow forms return nullptr; aligned forms likewise;
//   - threads making objects that other threads delete;
//   - `cxx_operators bad-delete` deletes a pointer the shim never gave out (run.sh expects
//     free()'s abort message and SIGABRT).
#include <dlfcn.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>
#include <map>

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { std::printf("FAIL " __VA_ARGS__); std::printf("\n"); failures++; } } while (0)

static const char* const forms[] = {
  "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
  "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
  "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZdlPvSt11align_val_t",
  "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t",
  "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

static void check_resolution() {
  for (const char* f : forms) {
    void* a = dlsym(RTLD_DEFAULT, f);
    Dl_info info{};
    CHECK(a != nullptr && dladdr(a, &info) && info.dli_fname && std::strstr(info.dli_fname, "libpinarena"),
          "%s resolves to %s, not libpinarena.so", f, a && info.dli_fname ? info.dli_fname : "nothing");
  }
}

struct alignas(256) Wide { unsigned char bytes[256]; };

static void check_forms() {
  // plain and array, every small size class and a few large and huge sizes
  for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(16), size_t(100), size_t(1000), size_t(1025), size_t(70000),
                   size_t(3) << 20, size_t(9) << 20}) {
    char* a = new char[n];
    char* b = static_cast<char*>(::operator new(n));
    CHECK(a != b, "two objects of %zu bytes at one address %p", n, static_cast<void*>(a));
    CHECK(reinterpret_cast<uintptr_t>(a) % __STDCPP_DEFAULT_NEW_ALIGNMENT__ == 0, "new[%zu] at %p: not aligned", n,
          static_cast<void*>(a));
    std::memset(a, 0x5a, n);
    std::memset(b, 0xa5, n);
    CHECK(n == 0 || (a[n - 1] == 0x5a && b[0] == static_cast<char>(0xa5)), "objects of %zu bytes overlap", n);
    delete[] a;
    ::operator delete(b, n);                          // sized
  }
  // aligned, plain and array
  for (size_t al : {size_t(32), size_t(64), size_t(4096), size_t(1) << 16, size_t(1) << 21}) {
    void* p = ::operator new(100, std::align_val_t(al));
    void* q = ::operator new[](al * 3, std::align_val_t(al));
    void* r = ::operator new(10, std::align_val_t(al), std::nothrow);
    CHECK(reinterpret_cast<uintptr_t>(p) % al == 0 && reinterpret_cast<uintptr_t>(q) % al == 0 &&
          r != nullptr && reinterpret_cast<uintptr_t>(r) % al == 0, "aligned new (%zu): %p %p %p", al, p, q, r);
    std::memset(q, 1, al * 3);
    ::operator delete(p, std::align_val_t(al));
    ::operator delete[](q, al * 3, std::align_val_t(al));
    ::operator delete(r, std::align_val_t(al), std::nothrow);
  }
  Wide* w = new Wide[3];                              // the language's own aligned array new and delete
  CHECK(reinterpret_cast<uintptr_t>(w) % 256 == 0, "new Wide[3] at %p: not 256-aligned", static_cast<void*>(w));
  delete[] w;
  // nothrow
  int* x = new (std::nothrow) int[10];
  CHECK(x != nullptr, "nothrow new int[10] failed");
  ::operator delete[](x, std::nothrow);
  // the standard library's containers
  std::map<std::string, std::vector<int>> m;
  for (int i = 0; i < 20000; i++) m[std::to_string(i * 7919 % 30011)].push_back(i);
  CHECK(m.size() == 20000, "map of 20000 keys holds %zu", m.size());
}

static int handler_calls = 0;
static void handler() {
  handler_calls++;
  std::set_new_handler(nullptr);                      // give up: the next failure throws
}

static void check_failure() {
  volatile size_t big = size_t(1) << 62;          // volatile: the compiler must not fold it
  const size_t impossible = big;
  std::set_new_handler(handler);
  bool threw = false;
  try {
    char* volatile p = new char[impossible];
    std::printf("FAIL new char[2^62] gave %p\n", static_cast<void*>(p));
    failures++;
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK(threw && handler_calls == 1, "new char[2^62]: threw %d, new-handler called %d times (want 1, 1)", threw,
        handler_calls);
  threw = false;
  try { (void)::operator new(impossible, std::align_val_t(64)); } catch (const std::bad_alloc&) { threw = true; }
  CHECK(threw, "aligned new of 2^62 bytes did not throw std::bad_alloc");
  CHECK(::operator new(impossible, std::nothrow) == nullptr, "nothrow new of 2^62 bytes did not return nullptr");
  CHECK(::operator new[](impossible, std::align_val_t(4096), std::nothrow) == nullptr,
        "aligned nothrow new[] of 2^62 bytes did not return nullptr");
}

// Objects made in one thread, deleted in another (the shim's remote free), over several rounds.
static void check_threads() {
  const int kThreads = 4, kObjects = 20000;
  std::vector<std::vector<std::string*>> made(kThreads);
  for (int round = 0; round < 3; round++) {
    std::vector<std::thread> t;
    for (int i = 0; i < kThreads; i++)
      t.emplace_back([&made, i, round] {
        std::vector<std::string*>& mine = made[(i + round) % kThreads];   // another thread's objects
        for (std::string* s : mine) delete s;
        mine.clear();
        for (int k = 0; k < kObjects; k++) mine.push_back(new std::string(static_cast<size_t>(k % 200), 'x'));
      });
    for (std::thread& th : t) th.join();
  }
  size_t live = 0;
  for (auto& v : made) { live += v.size(); for (std::string* s : v) delete s; }
  CHECK(live == kThreads * kObjects, "threads left %zu objects, want %d", live, kThreads * kObjects);
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "bad-delete") == 0) {
    static long not_ours[4];
    long* volatile p = &not_ours[1];                  // laundered: the compiler must not see it is static
    delete p;                                         // must abort with free()'s message
    std::printf("bad-delete: not stopped\n");
    return 0;
  }
  check_resolution();
  check_forms();
  check_failure();
  check_threads();
  std::printf("%s: %d failures\n", argv[0], failures);
  return failures ? 1 : 0;
}
