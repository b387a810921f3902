#!/usr/bin/env bash
# collect.sh BENCH SO REPS OUT.csv — every workload under every allocator, REPS runs each, interleaved
# (allocator order rotates per repetition so a burst of load on a shared machine does not land on one
# allocator), one CSV row per run: workload,allocator,run,seconds,peak_kib. The report computes
# min/median/max and ratios from it. REPS=1 is the smoke run `mvn verify` makes.
# BUDGET=SECONDS: the step's time budget (0 or unset: none). Round 1 of every workload always runs, under
# every allocator; a later round runs only if it would end before the workload's share of the budget
# (workload k of n: k/n of it, so time a workload leaves unused goes to the next). Each cut is printed
# and appended to the file CUTS names, if set: "malloc,WORKLOAD,N of REPS rounds".
# SHORT_ROUNDS_MAX=K (default 1: none): a workload whose round-1 runs all took under a second (aligned,
# huge, calloc: 1-40 ms) gets more rounds, at most REPS x K (perf/short-run-rounds.sh).
set -euo pipefail
# time workloads (small objects), then memory workloads (objects of 64 KiB to 1 GiB); WORKLOADS narrows the list
WORKLOADS=${WORKLOADS:-churn prodcons prodcons-1cpu larson realloc big huge aligned regrow strgrow calloc phased fork}
BENCH=$1 SO=$2 REPS=$3 OUT=$4
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
L=/usr/lib/x86_64-linux-gnu
declare -A PRE=([glibc]="" [jemalloc]=$L/libjemalloc.so.2 [mimalloc]=$L/libmimalloc.so.2
                [tcmalloc]=$L/libtcmalloc_minimal.so.4 [pinarena]=$SO)
ALLOCS=(glibc jemalloc mimalloc tcmalloc pinarena)
for a in "${ALLOCS[@]}"; do
  p=${PRE[$a]}
  if [ -n "$p" ] && [ ! -e "$p" ]; then
    echo "collect.sh: $p is missing for $a: apt-get install libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4" >&2
    exit 1
  fi
done
BUDGET=${BUDGET:-0}
echo "workload,allocator,run,seconds,peak_kib" > "$OUT"
read -ra LIST <<< "$WORKLOADS"
start=$(date +%s%N)
for k in "${!LIST[@]}"; do
  w=${LIST[$k]} done=0 rounds=$REPS longest=0
  share=$(( start + BUDGET * 1000000000 * (k + 1) / ${#LIST[@]} ))   # this workload's end, in ns
  for ((r = 1; r <= rounds; r++)); do
    began=$(date +%s%N)
    if [ "$r" -gt 1 ] && [ "$BUDGET" -gt 0 ] && [ $(( began + last )) -gt "$share" ]; then
      printf '  %s: %d of %d rounds: one more would overrun the %ss budget\n' "$w" "$done" "$rounds" "$BUDGET" >&2
      [ -z "${CUTS:-}" ] || echo "malloc,$w,$done of $rounds rounds" >> "$CUTS"
      break
    fi
    for i in "${!ALLOCS[@]}"; do
      a=${ALLOCS[$(( (i + r) % ${#ALLOCS[@]} ))]}
      read -r _ t m < <(LD_PRELOAD="${PRE[$a]}" "$BENCH" "$w")
      echo "$w,$a,$r,$t,$m" >> "$OUT"
      [ "$r" != 1 ] || longest=$(awk -v a="$longest" -v b="$t" 'BEGIN { print (b > a ? b : a) }')
    done
    done=$r last=$(( $(date +%s%N) - began ))
    [ "$r" != 1 ] || rounds=$("$HERE/../short-run-rounds.sh" "$REPS" "$longest" "${SHORT_ROUNDS_MAX:-1}")
  done
  [ "$done" -lt "$rounds" ] || printf '  %s: %d runs per allocator\n' "$w" "$rounds" >&2
done
