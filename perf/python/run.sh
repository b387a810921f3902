#!/usr/bin/env bash
# run.sh SO REPS OUT.csv [TEST ...] — CPython's own regression tests (Debian libpython3.11-testsuite), each
# run by `python3 -m test TEST` in one process (no worker subprocess: peak.py) under glibc and under
# LD_PRELOAD=SO, each with CPython's small-object allocator (pymalloc) and with PYTHONMALLOC=malloc (every
# object from malloc). REPS rounds, interleaved: a round runs the four combinations in an order that rotates
# per round, so load from elsewhere does not land on one allocator. One CSV row per run:
#   test,pythonmalloc,allocator,run,seconds,peak_kib,passed
# peak_kib: VmHWM + HugetlbPages of the process that ran the test; passed: its exit status was 0 (1) or not (0).
# Round r fixes the tests' random choices (`--randseed`) and str hashing (PYTHONHASHSEED) to r for all four
# runs: test_dict's test_copy_fuzz picks dicts of 50 000-150 000 entries at random, so its peak swung between
# ~27 and ~36 MiB under either allocator, and a round compared two different workloads.
# Default tests: test_email test_asyncio test_dict.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: run.sh SO REPS OUT.csv [TEST ...]" >&2; exit 2; }
SO=$1 REPS=$2 OUT=$3; shift 3
TESTS=("$@"); [ ${#TESTS[@]} -gt 0 ] || TESTS=(test_email test_asyncio test_dict)
PYTHON=${PYTHON:-/usr/bin/python3}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -e "$SO" ] || { echo "run.sh: $SO is missing (make -C bindings-c)" >&2; exit 1; }
"$PYTHON" -c 'import test.libregrtest' 2>/dev/null ||
  { echo "run.sh: $PYTHON has no regression tests: apt-get install libpython3.11-testsuite" >&2; exit 1; }
COMBOS=("pymalloc glibc" "pymalloc pinarena" "malloc glibc" "malloc pinarena")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo "test,pythonmalloc,allocator,run,seconds,peak_kib,passed" > "$OUT"
for t in "${TESTS[@]}"; do
  for r in $(seq 1 "$REPS"); do
    for i in "${!COMBOS[@]}"; do
      read -r pm a <<< "${COMBOS[$(( (i + r) % ${#COMBOS[@]} ))]}"
      pre=; [ "$a" = pinarena ] && pre=$SO
      pmenv=; [ "$pm" = malloc ] && pmenv=PYTHONMALLOC=malloc
      start=$(date +%s.%N)
      # the test's own output goes to a log; peak.py reports on fd 3. A failing test is a row with passed=0.
      (cd "$work" && env -u PYTHONMALLOC $pmenv PYTHONHASHSEED="$r" LD_PRELOAD="$pre" "$PYTHON" "$HERE/peak.py" "$t" "$r" \
         3> "$work/peak" > "$work/log" 2>&1) || true
      end=$(date +%s.%N)
      read -r peak passed < <(sed 's/peak_kib=\([0-9]*\) passed=\([01]\)/\1 \2/' "$work/peak")
      if [ -z "${peak:-}" ]; then
        echo "run.sh: $t ($pm, $a) reported no peak; its output:" >&2; tail -20 "$work/log" >&2; exit 1
      fi
      [ "$passed" = 1 ] || { echo "run.sh: $t failed ($pm, $a); its output ends:" >&2; tail -20 "$work/log" >&2; }
      echo "$t,$pm,$a,$r,$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b - a}'),$peak,$passed" >> "$OUT"
    done
  done
  printf '  %s: %d runs per combination\n' "$t" "$REPS" >&2
done
