#!/usr/bin/env bash
# perf/mimalloc-bench/run.sh [--quick] OUT.csv — the programs of mimalloc-bench (daanx/mimalloc-bench, pinned
# below) under glibc, mimalloc and libpinarena.so, interleaved: ROUNDS rounds, each round runs every program once
# under each allocator, the order of the allocators rotating per round, so load from elsewhere on a shared
# machine spreads over all three. One CSV row per run:
#   program,allocator,round,seconds,wall_s,cpu_s,peak_kib,time_is
# seconds: the program's time, as mimalloc-bench's bench.sh reads it; time_is says what it is: `wall` (a fixed
# amount of work: its wall time), `per_work` (larson, xmalloc-test, glibc-thread run a fixed time and print a
# throughput: the time per fixed work over that wall time) or `per_cpu` (rptest prints operations per CPU
# second: the CPU time per fixed work); peak_kib: largest resident set + largest HugetlbPages seen (measure.c).
# Then a table on stdout: per program the medians and the medians of the per-round ratios shim ÷ mimalloc and
# shim ÷ glibc, in time and in CPU seconds per the same work.
#   --quick   2 rounds, less work per program (every allocator; rptest left out: see below; ~45 s on an idle
#             2-core machine)
# Environment:
#   MIMALLOC_BENCH_SRC  a copy of mimalloc-bench at the pinned commit (its bench/ folder is what is built);
#                       unset: the commit's tarball is downloaded from GitHub into $BUILD/src (needs network)
#   SO        libpinarena.so (default bindings-c/target/libpinarena.so)
#   MIMALLOC  libmimalloc.so (default Debian's libmimalloc2.0)
#   ROUNDS    rounds (default 5, quick 2); a program whose first round's runs took under a second gets
#             more (perf/short-run-rounds.sh), at most ROUNDS x SHORT_ROUNDS_MAX (default 8; quick 1:
#             every quick run is short by design, and the quick bench has a time budget)
#   PROGRAMS  the programs to run (default all below)
#   BUILD     where the programs are built (default perf/target/mimalloc-bench)
# The sources are never copied into this repository: they are MIT- and other-licensed third-party code.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/perf/mimalloc-bench"
COMMIT=ce5784f1cef3d48ddc931479e4899ffad5ab3943   # mimalloc-bench master, 2026-07-15
QUICK=0
case "${1:-}" in
  --quick) QUICK=1; shift ;;
  -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -eq 1 ] || { echo "usage: perf/mimalloc-bench/run.sh [--quick] OUT.csv" >&2; exit 2; }
OUT=$1
BUILD=${BUILD:-$ROOT/perf/target/mimalloc-bench}
SO=${SO:-$ROOT/bindings-c/target/libpinarena.so}
MIMALLOC=${MIMALLOC:-/usr/lib/x86_64-linux-gnu/libmimalloc.so.2}
PROGRAMS=${PROGRAMS:-cfrac espresso barnes larson mstress rptest xmalloc-test cache-scratch1 cache-scratchN glibc-simple glibc-thread malloc-large}
if [ "$QUICK" = 1 ]; then ROUNDS=${ROUNDS:-2}; else ROUNDS=${ROUNDS:-5}; fi
if [ "$QUICK" = 1 ]; then SHORT_ROUNDS_MAX=${SHORT_ROUNDS_MAX:-1}; else SHORT_ROUNDS_MAX=${SHORT_ROUNDS_MAX:-8}; fi
PROCS=$(nproc)

for lib in "$SO" "$MIMALLOC"; do
  [ -e "$lib" ] || { echo "mimalloc-bench: $lib is missing (libpinarena.so: build bindings-c; mimalloc: apt-get install libmimalloc2.0)" >&2; exit 1; }
done

# --- sources: given, or the pinned commit's tarball
SRC=${MIMALLOC_BENCH_SRC:-}
if [ -z "$SRC" ]; then
  SRC="$BUILD/src/mimalloc-bench-$COMMIT"
  if [ ! -d "$SRC/bench" ]; then
    url="https://github.com/daanx/mimalloc-bench/archive/$COMMIT.tar.gz"
    echo "  mimalloc-bench: downloading $url" >&2
    mkdir -p "$BUILD/src"
    if ! curl -fsSL --max-time 120 "$url" | tar -xz -C "$BUILD/src"; then
      echo "mimalloc-bench: cannot download $url (offline?): set MIMALLOC_BENCH_SRC to a copy of" \
           "daanx/mimalloc-bench at $COMMIT" >&2
      exit 3
    fi
  fi
fi
B="$SRC/bench"
[ -f "$B/cfrac/cfrac.c" ] || { echo "mimalloc-bench: $B has no cfrac/cfrac.c: MIMALLOC_BENCH_SRC is not a mimalloc-bench copy" >&2; exit 1; }

# --- build (the flags of mimalloc-bench's bench/CMakeLists.txt, Release; warnings off: old code)
BIN="$BUILD/bin"
mkdir -p "$BIN"
CFLAGS="-O3 -DNDEBUG -w"
cc_prog() {   # cc_prog NAME COMPILER FLAGS... -- SOURCES...
  local name=$1 cc=$2; shift 2
  local flags=() srcs=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done; shift
  for s in "$@"; do srcs+=("$B/$s"); done
  if [ ! -x "$BIN/$name" ] || [ "$BIN/$name" -ot "$0" ]; then
    # shellcheck disable=SC2086  # CFLAGS: words
    "$cc" $CFLAGS "${flags[@]}" -o "$BIN/$name" "${srcs[@]}" -lpthread -lm
  fi
}
gcc -O2 -std=gnu11 -Wall -Wextra -Werror -o "$BIN/measure" "$HERE/measure.c"
# the programs build side by side (one compiler per program; ~40 s of CPU in all)
pids=()
cc_prog cfrac gcc -std=gnu89 -DNOMEMOPT=1 -- $(printf 'cfrac/%s.c ' cfrac pops pconst pio pabs pneg pcmp podd phalf \
  padd psub pmul pdivmod psqrt ppowmod atop ptoa itop utop ptou errorp pfloat pidiv pimod picmp primes pcfrac pgcd) &
pids+=($!)
cc_prog espresso gcc -std=gnu89 -- $(printf 'espresso/%s.c ' cofactor cols compl contain cubestr cvrin cvrm cvrmisc \
  cvrout dominate equiv espresso essen exact expand gasp getopt gimpel globals hack indep irred main map matrix mincov \
  opo pair part primes reduce rows set setc sharp sminterf solution sparse unate utility verify) &
pids+=($!)
cc_prog barnes gcc -std=gnu89 -- $(printf 'barnes/%s.c ' code code_io load grav getparam util) &
pids+=($!)
cc_prog larson g++ -std=c++17 -DCPP=1 -- larson/larson.cpp &
pids+=($!)
cc_prog mstress gcc -- mstress/mstress.c &
pids+=($!)
cc_prog rptest gcc -fpermissive -I"$B/rptest" -- rptest/rptest.c rptest/thread.c rptest/timer.c &
pids+=($!)
cc_prog xmalloc-test gcc -- xmalloc-test/xmalloc-test.c &
pids+=($!)
# cache-scratch's worker writes a byte of its object in its timed loop (objects of threads side by side in one
# cache line are what it measures). g++ 12 -O3 removes that object's new/delete pairs (allocation DCE) and its
# writes (dead before the delete): the timed loop then touched only the stack, whatever the allocator, and its
# ratios were noise by construction. The two flags keep the calls and the writes; the check below says so.
cc_prog cache-scratch g++ -std=c++17 -fno-allocation-dce -fno-tree-dce -- cache-scratch/cache-scratch.cpp &
pids+=($!)
cc_prog glibc-simple gcc -- glibc-bench/bench-malloc-simple.c &
pids+=($!)
cc_prog glibc-thread gcc -- glibc-bench/bench-malloc-thread.c &
pids+=($!)
cc_prog malloc-large g++ -std=c++17 -- malloc-large/malloc-large.cpp &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid" || { echo "mimalloc-bench: a program failed to build (above)" >&2; exit 1; }; done
if ! objdump -d --no-show-raw-insn -C "$BIN/cache-scratch" | awk '/<worker>:/,/ret *$/' | grep -q 'operator new'; then
  echo "mimalloc-bench: cache-scratch's worker calls no operator new once compiled: it would measure no allocator" >&2
  exit 1
fi

# --- the command of each program (mimalloc-bench's bench.sh, with nproc threads). Quick: the same programs on
# less work: espresso on the first 600 lines of its input, barnes on 1/10 of the bodies, the three programs whose
# work is a compile-time constant rebuilt from a copy with a smaller constant; rptest is left out (its memory
# sampler sleeps 4-5 s per sample, so one run is never shorter than ~5 s).
INPUTS="$BUILD/inputs"
mkdir -p "$INPUTS"
sed '2s/^163840$/16384/' "$B/barnes/input" > "$INPUTS/barnes-quick.input"
head -n 600 "$B/espresso/largest.espresso" > "$INPUTS/espresso-quick.espresso"
quick_variant() {   # quick_variant NAME SOURCE SED-EXPRESSION COMPILER FLAGS...: NAME-quick from an edited copy
  local name=$1 src=$2 edit=$3 cc=$4; shift 4
  mkdir -p "$BUILD/quick-src"
  sed "$edit" "$B/$src" > "$BUILD/quick-src/${src##*/}"
  ! cmp -s "$B/$src" "$BUILD/quick-src/${src##*/}" ||
    { echo "mimalloc-bench: '$edit' changes nothing in $src (the pinned sources moved?)" >&2; exit 1; }
  [ -x "$BIN/$name-quick" ] && [ "$BIN/$name-quick" -nt "$0" ] && return
  # shellcheck disable=SC2086  # CFLAGS: words
  "$cc" $CFLAGS "$@" -o "$BIN/$name-quick" "$BUILD/quick-src/${src##*/}" -lpthread -lm
}
if [ "$QUICK" = 1 ]; then
  quick_variant glibc-simple glibc-bench/bench-malloc-simple.c 's/^#define NUM_ITERS 2000000/#define NUM_ITERS 250000/' gcc
  quick_variant glibc-thread glibc-bench/bench-malloc-thread.c 's/^#define BENCHMARK_DURATION\t2$/#define BENCHMARK_DURATION\t1/' gcc
  quick_variant malloc-large malloc-large/malloc-large.cpp 's/kNumIterations = 2000;/kNumIterations = 100;/' g++ -std=c++17
  PROGRAMS=${PROGRAMS/rptest/}
  Q=-quick CFRAC_N=175451865205073170563711388363 ESPRESSO_IN=$INPUTS/espresso-quick.espresso
  BARNES_IN=$INPUTS/barnes-quick.input LARSON_S=1 MSTRESS_IT=10 RPTEST_LOOPS=100 XMALLOC_T=0.5 SCRATCH_REPS=500000
  echo "  quick: rptest left out (its sampler sleeps ~5 s per run); the others on less work" >&2
else
  Q= CFRAC_N=17545186520507317056371138836327483792789528 ESPRESSO_IN=$B/espresso/largest.espresso
  BARNES_IN=$B/barnes/input LARSON_S=5 MSTRESS_IT=25 RPTEST_LOOPS=500 XMALLOC_T=5 SCRATCH_REPS=2000000
fi
command_of() {
  case $1 in
    cfrac) echo "cfrac $CFRAC_N" ;;
    espresso) echo "espresso $ESPRESSO_IN" ;;
    barnes) echo "barnes" ;;
    larson) echo "larson $LARSON_S 8 1000 5000 100 4141 $PROCS" ;;
    mstress) echo "mstress $PROCS 50 $MSTRESS_IT" ;;
    rptest) echo "rptest $PROCS 0 1 2 $RPTEST_LOOPS 1000 100 8 16000" ;;
    xmalloc-test) echo "xmalloc-test -w $PROCS -t $XMALLOC_T -s 64" ;;
    cache-scratch1) echo "cache-scratch 1 1000 1 $SCRATCH_REPS $PROCS" ;;
    cache-scratchN) echo "cache-scratch $PROCS 1000 1 $SCRATCH_REPS $PROCS" ;;
    glibc-simple) echo "glibc-simple$Q" ;;
    glibc-thread) echo "glibc-thread$Q $PROCS" ;;
    malloc-large) echo "malloc-large$Q" ;;
    *) echo "mimalloc-bench: unknown program '$1'" >&2; exit 2 ;;
  esac
}
# What a program's seconds are (the CSV's time_is).
time_is() {
  case $1 in larson|xmalloc-test|glibc-thread) echo per_work ;; rptest) echo per_cpu ;; *) echo wall ;; esac
}
# The seconds a run stands for: wall time, or the time per fixed work a fixed-duration program prints.
seconds_of() {   # seconds_of PROGRAM OUTPUT_FILE WALL
  local v
  case $1 in
    larson) v=$(sed -n 's/.*relative time: \([0-9.]*\)s.*/\1/p' "$2") ;;
    xmalloc-test) v=$(sed -n 's/^rtime: \([0-9.]*\).*/\1/p' "$2") ;;
    glibc-thread) v=$(sed -n 's/^\([0-9.]*\) iterations.*/\1/p' "$2" | awk '$1 > 0 {printf "%.3f", 1e9 / $1}') ;;
    rptest) v=$(sed -n 's/.*[^0-9]\([0-9][0-9]*\) memory ops\/CPU second.*/\1/p' "$2" | awk '$1 > 0 {printf "%.3f", 2e6 / $1}') ;;
    *) v=$3 ;;
  esac
  [ -n "$v" ] || { echo "mimalloc-bench: $1 printed no figure:" >&2; tail -5 "$2" >&2; exit 1; }
  echo "$v"
}

ALLOCS=(glibc mimalloc pinarena)
declare -A PRE=([glibc]="" [mimalloc]=$MIMALLOC [pinarena]=$SO)
RUN="$BUILD/run"
mkdir -p "$RUN"
echo "program,allocator,round,seconds,wall_s,cpu_s,peak_kib,time_is" > "$OUT"
for p in $PROGRAMS; do
  read -r exe args <<< "$(command_of "$p")"
  rounds=$ROUNDS longest=0
  for ((r = 1; r <= rounds; r++)); do
    for i in "${!ALLOCS[@]}"; do
      a=${ALLOCS[$(( (i + r) % ${#ALLOCS[@]} ))]}
      # barnes reads its parameters from stdin; espresso and the rest from arguments; run in $RUN (files they write)
      # shellcheck disable=SC2086  # args: words
      read -r wall cpu peak code < <(cd "$RUN" && LD_PRELOAD="${PRE[$a]}" "$BIN/measure" "$RUN/$p-$a.out" \
        "$BIN/$exe" $args < "$BARNES_IN")
      [ "$code" = 0 ] || { echo "mimalloc-bench: $p under $a exited with $code:" >&2; tail -5 "$RUN/$p-$a.out" >&2; exit 1; }
      echo "$p,$a,$r,$(seconds_of "$p" "$RUN/$p-$a.out" "$wall"),$wall,$cpu,$peak,$(time_is "$p")" >> "$OUT"
      [ "$r" != 1 ] || longest=$(awk -v a="$longest" -v b="$wall" 'BEGIN { print (b > a ? b : a) }')
    done
    # a program whose runs take well under a second gets more rounds (perf/short-run-rounds.sh)
    [ "$r" != 1 ] || rounds=$("$ROOT/perf/short-run-rounds.sh" "$ROUNDS" "$longest" "$SHORT_ROUNDS_MAX")
  done
  printf '  %s: %d rounds\n' "$p" "$rounds" >&2
done

echo "| program | glibc s | mimalloc s | pinarena s | pinarena ÷ mimalloc | pinarena ÷ glibc | CPU ÷ mimalloc | CPU ÷ glibc | peak MiB glibc / mimalloc / pinarena | peak ÷ max |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
# CPU: user + system seconds per the same work (the report's way): cpu_s, seconds x cpu / wall, or seconds
awk -F, '
  function median(a, m,   i, j, t) {
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  function med(p, a, V,   r, m, v) { m = 0; for (r = 1; r <= R; r++) if ((p, a, r) in V) v[++m] = V[p, a, r]; return median(v, m) }
  function ratio(p, a, V,   r, m, v) {
    m = 0; for (r = 1; r <= R; r++) if ((p, a, r) in V && (p, "pinarena", r) in V && V[p, a, r] > 0) v[++m] = V[p, "pinarena", r] / V[p, a, r]
    return median(v, m)
  }
  NR > 1 { if (!($1 in seen)) { seen[$1] = 1; P[++np] = $1 }
           S[$1, $2, $3] = $4; K[$1, $2, $3] = $7; C[$1, $2, $3] = $8 == "per_cpu" ? $4 : ($8 == "per_work" && $5 > 0) ? $4 * $6 / $5 : $6
           if ($3 > R) R = $3 }
  END {
    for (x = 1; x <= np; x++) { p = P[x]
      pg = med(p, "glibc", K); pm = med(p, "mimalloc", K); pp = med(p, "pinarena", K)
      printf "| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f | %.1f / %.1f / %.1f | %.2f |\n", p, med(p, "glibc", S),
             med(p, "mimalloc", S), med(p, "pinarena", S), ratio(p, "mimalloc", S), ratio(p, "glibc", S),
             ratio(p, "mimalloc", C), ratio(p, "glibc", C), pg / 1024, pm / 1024, pp / 1024, pp / (pg > pm ? pg : pm)
    }
  }' "$OUT"
