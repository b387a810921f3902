#!/usr/bin/env bash
# Real programs, unchanged, under LD_PRELOAD=libpinarena.so. Each test
# asserts from the shim's own stats (PINARENA_STATS=file, one line per
# process at exit) that the shim served the program's allocations — not only
# that it exited 0. A missing program is a FAILURE naming the Debian package
# (no silent skip). Ends with "N passed, N failed, N skipped".
#   tests/real/run.sh [FILTER]   only the tests whose name contains FILTER (the C runners' TESTS_FILTER)
set -uo pipefail
SO=${PINARENA_SO:?PINARENA_SO=path/to/libpinarena.so}
FILTER=${1:-}
WORK=$(mktemp -d /tmp/pinarena-real-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
passed=0 failed=0 skipped=0

want() {  # want NAME...: one of the block's tests is selected by FILTER
  local name
  for name in "$@"; do [[ -z "$FILTER" || "$name" == *"$FILTER"* ]] && return 0; done
  return 1
}
need() {  # need CMD PACKAGE
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "FAIL $T: '$1' not installed (Debian package: $2)"; failed=$((failed + 1)); return 1
}
# stats_ok FILE EXE_SUBSTRING MIN_SMALL_MALLOCS: some process line of that exe served >= N small mallocs
stats_ok() {
  awk -v exe="$2" -v min="$3" '
    index($0, "exe=") && index($0, exe) {
      for (i = 1; i <= NF; i++) if ($i ~ /^small_mallocs=/) { split($i, kv, "="); if (kv[2] + 0 >= min) ok = 1; best = (kv[2] + 0 > best ? kv[2] + 0 : best) }
    }
    END { if (!ok) { printf "      no %s process with >= %d small mallocs (best %d)\n", exe, min, best; exit 1 } }' "$1"
}
run() {  # run NAME EXE MIN -- command...
  T=$1; local exe=$2 min=$3; shift 4
  want "$T" || return 0
  local st="$WORK/$T.stats"; : > "$st"
  echo "RUN  $T"
  if ! PINARENA_STATS="$st" LD_PRELOAD="$SO" "$@" > "$WORK/$T.out" 2>&1; then
    echo "FAIL $T: exit $? — output:"; tail -20 "$WORK/$T.out" | sed 's/^/      /'; failed=$((failed + 1)); return
  fi
  if stats_ok "$st" "$exe" "$min"; then
    echo "      $(grep -F "exe=" "$st" | grep -F "$exe" | head -1 | cut -c1-200)"
    echo "PASS $T"; passed=$((passed + 1))
  else
    echo "FAIL $T: the shim did not serve $exe"; failed=$((failed + 1))
  fi
  if grep -q "free(): \|corrupted" "$WORK/$T.out"; then echo "FAIL $T: allocator error"; failed=$((failed + 1)); fi
}

# --- python3: dict/list churn (PYTHONMALLOC=malloc: every object through malloc, not pymalloc arenas)
T=real_python3_churn
if want $T && need /usr/bin/python3 python3; then
  cat > "$WORK/churn.py" <<'PY'
import random
d = {}
for r in range(30):
    for i in range(20000):
        d[(r * 7919 + i) % 50000] = [str(i)] * (i % 7) + [{"k": i}]
    for k in random.sample(list(d), len(d) // 2):
        del d[k]
l = [bytes(i % 300) for i in range(100000)]
assert sum(map(len, l)) > 0 and len(d) > 0
print("ok", len(d), len(l))
PY
  run real_python3_churn python3 500000 -- env PYTHONMALLOC=malloc /usr/bin/python3 "$WORK/churn.py"
fi

# --- gcc compiling a C file (driver, cc1, as, collect2, ld all under the shim)
T=real_gcc_compile
if want $T && need gcc gcc; then
  cat > "$WORK/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
struct node { struct node* next; int v; };
int main(void) { struct node* h = NULL; for (int i = 0; i < 1000; i++) { struct node* n = malloc(sizeof *n); n->v = i; n->next = h; h = n; }
  long s = 0; while (h) { struct node* n = h->next; s += h->v; free(h); h = n; } printf("%ld\n", s); return s != 499500; }
C
  run real_gcc_compile cc1 10000 -- gcc -O2 -o "$WORK/prog" "$WORK/prog.c"
  [ -x "$WORK/prog" ] && "$WORK/prog" >/dev/null || { echo "FAIL real_gcc_compile: compiled program wrong"; failed=$((failed + 1)); }
fi

# --- git init / add / commit
T=real_git_commit
if want $T && need git git; then
  mkdir -p "$WORK/repo" && for i in $(seq 1 50); do echo "file $i" > "$WORK/repo/f$i.txt"; done
  run real_git_commit git 200 -- sh -c "cd '$WORK/repo' && git init -q && git add . && git -c user.name=t -c user.email=t@t commit -qm init && git log --oneline | grep -q init"
fi

# --- java -version and a small Java program (JVM's native allocations: malloc for its metadata, threads)
T=real_java_version
if want real_java_version real_java_program && need java openjdk-17-jdk-headless; then
  run real_java_version java 1000 -- java -version
  T=real_java_program
  cat > "$WORK/Churn.java" <<'J'
import java.util.*;
public class Churn { public static void main(String[] a) throws Exception {
  Map<Integer, List<String>> m = new HashMap<>();
  for (int i = 0; i < 200000; i++) m.computeIfAbsent(i % 5000, k -> new ArrayList<>()).add("v" + i);
  Thread[] t = new Thread[4];
  for (int i = 0; i < 4; i++) { t[i] = new Thread(() -> { StringBuilder sb = new StringBuilder(); for (int j = 0; j < 100000; j++) sb.append(j); }); t[i].start(); }
  for (Thread x : t) x.join();
  System.out.println("ok " + m.size()); } }
J
  run real_java_program java 1000 -- java "$WORK/Churn.java"
fi

# --- Open MPI: 2 ranks exchange buffers, data checked
T=real_openmpi_2ranks
if want $T && need mpicc libopenmpi-dev && need mpirun openmpi-bin; then
  cat > "$WORK/mpi.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int bad = 0;
  for (int round = 0; round < 50; round++) {
    size_t n = (size_t)1 << (10 + round % 12);            /* 1 KiB .. 2 MiB */
    unsigned char* s = malloc(n), *r = malloc(n);          /* fresh malloc each round: free+malloc reuse */
    for (size_t i = 0; i < n; i++) s[i] = (unsigned char)(i * 31 + round + rank);
    MPI_Sendrecv(s, (int)n, MPI_BYTE, 1 - rank, round, r, (int)n, MPI_BYTE, 1 - rank, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t i = 0; i < n; i++) if (r[i] != (unsigned char)(i * 31 + round + (1 - rank))) { bad++; break; }
    free(s); free(r);
  }
  int tot = 0; MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi exchange: %s\n", tot ? "CORRUPT" : "ok");
  MPI_Finalize();
  return tot != 0;
}
C
  if mpicc -O2 -o "$WORK/mpi" "$WORK/mpi.c"; then
    run real_openmpi_2ranks "$WORK/mpi" 1000 -- mpirun --allow-run-as-root --oversubscribe -np 2 \
        -x LD_PRELOAD -x PINARENA_STATS -x UCX_MEM_MALLOC_HOOKS=no "$WORK/mpi"
    n=$(grep -c "exe=$WORK/mpi " "$WORK/real_openmpi_2ranks.stats" 2>/dev/null || echo 0)
    if [ "$n" -ne 2 ]; then echo "FAIL real_openmpi_2ranks: expected stats from 2 ranks, got $n"; failed=$((failed + 1)); fi
    grep -q "mpi exchange: ok" "$WORK/real_openmpi_2ranks.out" || { echo "FAIL real_openmpi_2ranks: data check"; failed=$((failed + 1)); }
  else
    echo "FAIL $T: mpicc failed"; failed=$((failed + 1))
  fi
fi

# --- C++: operator new and delete are the shim's own (src/shim/cxx.c): every form resolves to it, objects of
# every form, the new-handler and std::bad_alloc on failure, nothrow forms, threads (cxx_operators.cpp); a
# pointer the shim never gave out aborts delete with free()'s message; a program's own operator new stays its own
HERE_REAL=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=real_cxx_operators
if want $T real_cxx_bad_delete real_cxx_own_operator_new && need g++ g++; then
  if g++ -std=c++17 -O2 -Wall -Wextra -Werror -pthread -o "$WORK/cxx" "$HERE_REAL/cxx_operators.cpp" -ldl; then
    run real_cxx_operators "$WORK/cxx" 20000 -- "$WORK/cxx"
    T=real_cxx_bad_delete
    if want $T; then
      echo "RUN  $T"
      rc=$( { LD_PRELOAD="$SO" "$WORK/cxx" bad-delete > "$WORK/$T.out" 2>&1; echo $?; } 2>/dev/null )   # quiet: bash's "Aborted"
      if [ "$rc" -eq 134 ] && grep -q "free(): invalid pointer" "$WORK/$T.out"; then echo "PASS $T"; passed=$((passed + 1))
      else echo "FAIL $T: exit $rc (want 134, SIGABRT) — output:"; sed 's/^/      /' "$WORK/$T.out"; failed=$((failed + 1)); fi
    fi
  else
    echo "FAIL $T: g++ failed"; failed=$((failed + 1))
  fi
  T=real_cxx_own_operator_new
  if want $T; then
    cat > "$WORK/own.cpp" <<'CPP'
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
static int mine = 0;
void* operator new(std::size_t n) { mine++; void* p = std::malloc(n ? n : 1); if (!p) throw std::bad_alloc(); return p; }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
int main() { for (int i = 0; i < 1000; i++) delete new std::string(100, 'x'); std::printf("own new: %d\n", mine); return mine < 1000; }
CPP
    if g++ -std=c++17 -O0 -o "$WORK/own" "$WORK/own.cpp"; then
      run real_cxx_own_operator_new "$WORK/own" 1000 -- "$WORK/own"
    else
      echo "FAIL $T: g++ failed"; failed=$((failed + 1))
    fi
  fi
fi

[ -n "$FILTER" ] && [ $((passed + failed + skipped)) -eq 0 ] && echo "no real-program test matches '$FILTER'"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
