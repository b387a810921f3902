#!/usr/bin/env bash
# run.sh BENCH SO — best of REPS (default 3) runs per workload per allocator; prints a markdown table
# with time, peak memory (VmHWM + HugetlbPages) and ratios against glibc and mimalloc.
set -euo pipefail
# time workloads (small objects), then memory workloads (objects of 64 KiB to 1 GiB); WORKLOADS narrows the list
WORKLOADS=${WORKLOADS:-churn prodcons prodcons-1cpu larson realloc big huge aligned regrow strgrow calloc phased fork}
BENCH=$1 SO=$2
L=/usr/lib/x86_64-linux-gnu
declare -A PRE=([glibc]="" [jemalloc]=$L/libjemalloc.so.2 [mimalloc]=$L/libmimalloc.so.2 [tcmalloc]=$L/libtcmalloc_minimal.so.4 [pinarena]=$SO)
ALLOCS=(glibc jemalloc mimalloc tcmalloc pinarena)
declare -A T M
for w in $WORKLOADS; do
  for a in "${ALLOCS[@]}"; do
    p=${PRE[$a]}
    if [ -n "$p" ] && [ ! -e "$p" ]; then echo "missing $p (install the Debian package)" >&2; exit 1; fi
    best=""
    for r in $(seq 1 "${REPS:-3}"); do          # best of REPS runs: the machine may be shared
      read -r _ t m < <(LD_PRELOAD="$p" "$BENCH" "$w")
      if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$t; bm=$m; fi
    done
    T[$w,$a]=$best M[$w,$a]=$bm
  done
done
printf "| workload | %s |\n" "$(printf '%s | ' "${ALLOCS[@]}")"
echo "|---|---|---|---|---|---|"
for w in $WORKLOADS; do
  row="| $w time s |"; for a in "${ALLOCS[@]}"; do row+=" ${T[$w,$a]} |"; done; echo "$row"
  row="| $w peak MiB |"; for a in "${ALLOCS[@]}"; do row+=" $(awk -v k=${M[$w,$a]} 'BEGIN{printf "%.1f", k/1024}') |"; done; echo "$row"
done
echo
echo "| workload | pinarena/glibc time | pinarena/mimalloc time | pinarena/mimalloc peak |"
echo "|---|---|---|---|"
for w in $WORKLOADS; do
  awk -v w=$w -v pt=${T[$w,pinarena]} -v gt=${T[$w,glibc]} -v mt=${T[$w,mimalloc]} -v pm=${M[$w,pinarena]} -v mm=${M[$w,mimalloc]} \
    'BEGIN{printf "| %s | %.2f | %.2f | %.2f |\n", w, pt/gt, pt/mt, pm/mm}'
done
