#!/usr/bin/env bash
# ab.sh BENCH LABEL=SO[,VAR=VALUE...] [...] — two or more builds of libpinarena.so against each other, in one run:
# ROUNDS (default 15) rounds per workload, each round one run of every build in an order that rotates
# per round (so a burst of load from elsewhere on the machine does not land on one build), then per
# workload and build: median, min and max of the wall time and of the CPU time (user + sys), and the
# ratio to the first build (the reference) as the median of the per-round ratios — each round's runs
# lie close together in time, so load that lasts a round cancels. CPU time is the steadier figure on a
# shared machine: a run that waits for a CPU is slower in wall time but not in CPU time (prodcons and
# larson spin-wait a little, so their CPU time also counts waiting).
#   ROUNDS=21 WORKLOADS="churn prodcons" ./ab.sh build/pinarena-bench before=/tmp/a/libpinarena.so after=...
# VAR=VALUE after the path: environment for that build's runs (e.g. ,PINARENA_PAGES=hugetlb, to compare
# builds on the same page backing). Raw runs go to $OUT (default ab.csv): workload,build,round,wall_s,cpu_s.
set -euo pipefail
BENCH=$1; shift
WORKLOADS=${WORKLOADS:-churn prodcons larson}
ROUNDS=${ROUNDS:-15}
OUT=${OUT:-ab.csv}
LABELS=() SOS=() ENVS=()
for spec in "$@"; do
  rest=${spec#*=} env=
  case $rest in *,*) env=${rest#*,}; rest=${rest%%,*} ;; esac
  LABELS+=("${spec%%=*}") SOS+=("$rest") ENVS+=("${env//,/ }")
  [ -e "$rest" ] || { echo "ab.sh: $rest is missing" >&2; exit 1; }
done
n=${#LABELS[@]}
[ "$n" -ge 2 ] || { echo "usage: ab.sh BENCH REF=so OTHER=so [...]" >&2; exit 2; }
TIMEFORMAT='%3U %3S'
echo "workload,build,round,wall_s,cpu_s" > "$OUT"
for w in $WORKLOADS; do
  for r in $(seq 1 "$ROUNDS"); do
    for i in $(seq 0 $((n - 1))); do
      k=$(( (i + r) % n ))
      # shellcheck disable=SC2086  # ENVS: words VAR=VALUE
      { time env ${ENVS[$k]} LD_PRELOAD="${SOS[$k]}" "$BENCH" "$w" > "$OUT.run"; } 2> "$OUT.time"
      read -r _ t _ < "$OUT.run"
      read -r u s < "$OUT.time"
      echo "$w,${LABELS[$k]},$r,$t,$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.3f", u + s}')" >> "$OUT"
    done
  done
  printf '  %s: %d rounds\n' "$w" "$ROUNDS" >&2
done
rm -f "$OUT.run" "$OUT.time"
echo "| workload | build | wall s median [min, max] | ratio | CPU s median [min, max] | ratio |"
echo "|---|---|---|---|---|---|"
awk -F, -v ref="${LABELS[0]}" -v order="${LABELS[*]}" '
  function median(a, m,   i, j, t) {            # a[1..m], sorted in place
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  NR > 1 { W[$1] = 1; if (!($1 in WO)) { WO[$1] = ++nw; WN[nw] = $1 }
           wall[$1, $2, $3] = $4; cpu[$1, $2, $3] = $5; if ($3 > R) R = $3 }
  END {
    nb = split(order, B, " ")
    for (x = 1; x <= nw; x++) { w = WN[x]
      for (b = 1; b <= nb; b++) {
        m = 0; delete vw; delete vc; delete rw; delete rc; lw = hw = lc = hc = ""
        for (r = 1; r <= R; r++) {
          if (!((w, B[b], r) in wall)) continue
          m++; vw[m] = wall[w, B[b], r]; vc[m] = cpu[w, B[b], r]
          rw[m] = vw[m] / wall[w, ref, r]; rc[m] = cpu[w, ref, r] > 0 ? vc[m] / cpu[w, ref, r] : 1
          if (lw == "" || vw[m] < lw) lw = vw[m]; if (hw == "" || vw[m] > hw) hw = vw[m]
          if (lc == "" || vc[m] < lc) lc = vc[m]; if (hc == "" || vc[m] > hc) hc = vc[m]
        }
        printf "| %s | %s | %.3f [%.3f, %.3f] | %.3f | %.3f [%.3f, %.3f] | %.3f |\n", w, B[b],
               median(vw, m), lw, hw, median(rw, m), median(vc, m), lc, hc, median(rc, m)
      }
    }
  }' "$OUT"
