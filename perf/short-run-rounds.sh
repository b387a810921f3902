#!/usr/bin/env bash
# perf/short-run-rounds.sh ROUNDS LONGEST_S MAX — the rounds a benchmark whose runs are short gets: a run well
# under a second swings by more than the allocators differ (mstress: 0.1 s; 5 rounds said 0.94 x mimalloc one
# run and 1.03 the next), so it gets about a second of runs per round of the others:
# ROUNDS x ceil(1 s / LONGEST_S), at least ROUNDS, at most ROUNDS x MAX. LONGEST_S: the longest of its first
# round's runs, in seconds. Used by perf/mimalloc-bench/run.sh and perf/native/collect.sh.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: perf/short-run-rounds.sh ROUNDS LONGEST_S MAX" >&2; exit 2; }
awk -v n="$1" -v w="$2" -v m="$3" \
  'BEGIN { k = w > 0 ? int(1 / w + 0.999) : m; if (k < 1) k = 1; if (k > m) k = m; print n * k }'
