#!/usr/bin/env bash
# perf/mpi-apps/run.sh — real MPI applications under glibc, glibc with the stacks' settings and the shim,
# side by side, interleaved:
# hpcc (HPC Challenge, Debian `hpcc`) and NetPIPE (`netpipe-openmpi`, NPopenmpi), two ranks.
#
#   perf/mpi-apps/run.sh host|rxe0 ROUNDS OUT_DIR [LIBPINARENA_SO]
#
# host   two ranks on this machine, shared memory (pml ob1, btl self,vader).
# rxe0   two ranks in the Soft-RoCE guest, every byte over rxe0 (testbed/mpirun-rxe: pml cm, mtl ofi,
#        verbs;ofi_rxm). Run it as the guest command: testbed/softroce --mttcg --rw OUT_DIR -- perf/mpi-apps/run.sh rxe0 ...
# The shim runs the way the README says to launch it: `pinarena exec [--mpi ofi] -- mpirun ...` (every rank
# preloads libpinarena.so, every stack's memory hooks off, libfabric's cache fed by the shim). The third
# configuration, glibc+settings, is `pinarena exec --no-shim`: the same settings handed on the same way, nothing
# preloaded, so shim ÷ glibc splits into what the hooks-off settings cost (glibc+settings ÷ glibc, paid by any
# hooks-off launch) and what the allocator costs (shim ÷ glibc+settings). Round r runs the three app by app,
# the order rotated by one each round, so a load change hits all of them.
# MPI_APPS (environment): the applications to run, default "hpcc netpipe".
# NETPIPE_REPEATS (environment): NetPIPE's repeats per message size (default 30 on the host, 5 over rxe0).
# Input: hpccinf.txt beside this script (host) or hpccinf-rxe0.txt (smaller: the guest is emulated).
# Output: OUT_DIR/mpi-apps.csv, one row a measurement:
#   where,app,phase,metric,unit,better,round,allocator,value      (better: lower|higher;
#                                                                  allocator: glibc|glibc+settings|pinarena)
# and each run's own output (OUT_DIR/ROUND-ALLOCATOR-APP.out, hpccoutf.txt copies). Exit 1 if a run failed.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WHERE=${1:?host|rxe0}
ROUNDS=${2:?ROUNDS}
OUT=${3:?OUT_DIR}
SO=${4:-$ROOT/bindings-c/target/libpinarena.so}
PINARENA=$ROOT/bindings-c/target/pinarena
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CSV=$OUT/mpi-apps.csv
failed=0

case "$WHERE" in
  host) INF=$HERE/hpccinf.txt NP_MAX=4194304 NP_REPEATS=30
        # yield_when_idle: two polling ranks on a busy 2-core machine otherwise spin through each other's slice
        LAUNCH=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 --mca btl self,vader
                --mca mpi_yield_when_idle 1)
        SHIM_EXEC=("$PINARENA" exec --)
        SETTINGS_EXEC=("$PINARENA" exec --no-shim --) ;;
  rxe0) INF=$HERE/hpccinf-rxe0.txt NP_MAX=4194304 NP_REPEATS=5   # rxe's largest message is 8 MiB; emulated: few repeats
        [ -e /sys/class/infiniband/rxe0 ] || { echo "run.sh rxe0: no rxe0 here (run it in testbed/softroce)" >&2; exit 2; }
        # One host thread for both guest CPUs takes turns between the rank that computes and the one that polls
        # for its message, so a phase's rate is how those turns fell: glibc with and without the hooks-off
        # settings (one allocator) differed by 0.53-3.67 per compute phase in 2 rounds; with a host thread per
        # guest CPU (--mttcg), 4 idle rounds, the medians of the same ratios lay within 0.84-1.38.
        [ "${PINARENA_TESTBED_CPU_THREADS:-}" != 1 ] || {
          echo "run.sh rxe0: the guest's CPUs share one host thread: boot it with testbed/softroce --mttcg" \
               "(a phase's figure would measure the emulator's turns between the two ranks, not the allocator)" >&2
          exit 2; }
        LAUNCH=("$ROOT/testbed/mpirun-rxe" --mca mpi_yield_when_idle 1)
        SHIM_EXEC=(env "MPIRUN_RXE_WRAP=$PINARENA exec --mpi ofi --")
        SETTINGS_EXEC=(env "MPIRUN_RXE_WRAP=$PINARENA exec --mpi ofi --no-shim --") ;;
  *) echo "run.sh: where is host or rxe0, not '$WHERE'" >&2; exit 2 ;;
esac
NP_REPEATS=${NETPIPE_REPEATS:-$NP_REPEATS}
[[ $NP_REPEATS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: NETPIPE_REPEATS is a count above 0, not '$NP_REPEATS'" >&2; exit 2; }
APPS=${MPI_APPS:-hpcc netpipe}
for app in $APPS; do
  case "$app" in hpcc|netpipe) ;; *) echo "run.sh: MPI_APPS names hpcc and netpipe, not '$app'" >&2; exit 2 ;; esac
done
for tool in hpcc NPopenmpi; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool missing (apt-get install hpcc netpipe-openmpi)" >&2; exit 2; }
done
[ -r "$SO" ] || { echo "run.sh: no shim at $SO (make -C bindings-c)" >&2; exit 2; }
export PINARENA_LIB=$SO
echo "where,app,phase,metric,unit,better,round,allocator,value" >"$CSV"

# hpcc's summary keys per phase: PHASE KEY UNIT BETTER. The Single* runs compute on one rank while the other
# waits: no MPI scheduling in those figures.
HPCC_METRICS="HPL HPL_time s lower
DGEMM StarDGEMM_Gflops Gflop/s higher
DGEMM SingleDGEMM_Gflops Gflop/s higher
STREAM StarSTREAM_Triad GB/s higher
STREAM StarSTREAM_Copy GB/s higher
STREAM SingleSTREAM_Triad GB/s higher
PTRANS PTRANS_GBs GB/s higher
RandomAccess MPIRandomAccess_GUPs GUP/s higher
RandomAccess StarRandomAccess_GUPs GUP/s higher
RandomAccess SingleRandomAccess_GUPs GUP/s higher
FFT StarFFT_Gflops Gflop/s higher
FFT MPIFFT_Gflops Gflop/s higher
FFT SingleFFT_Gflops Gflop/s higher
latency AvgPingPongLatency_usec us lower
bandwidth AvgPingPongBandwidth_GBytes GB/s higher"

# row APP PHASE METRIC UNIT BETTER VALUE (ROUND and ALLOC from the caller)
row() { [ -n "$6" ] && echo "$WHERE,$1,$2,$3,$4,$5,$round,$alloc,$6" >>"$CSV"; }
# summary FILE KEY: KEY=VALUE from hpcc's summary section
summary() { sed -n "/^Begin of Summary/,/^End of Summary/s/^$2=//p" "$1" | head -1; }

# launch ALLOC PROGRAM ARGS...: the job under glibc, glibc+settings or the shim, in the current directory
launch() {
  local a=$1; shift
  case "$a" in
    pinarena) "${SHIM_EXEC[@]}" "${LAUNCH[@]}" "$@" ;;
    glibc+settings) "${SETTINGS_EXEC[@]}" "${LAUNCH[@]}" "$@" ;;
    *) "${LAUNCH[@]}" "$@" ;;
  esac
}

run_hpcc() {
  local dir=$OUT/work-$round-$alloc-hpcc t0 t1
  rm -rf "$dir"; mkdir -p "$dir"; cp "$INF" "$dir/hpccinf.txt"
  t0=$(date +%s.%N)
  (cd "$dir" && launch "$alloc" hpcc) >"$OUT/$round-$alloc-hpcc.out" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  local f=$dir/hpccoutf.txt
  if [ $rc != 0 ] || [ "$(summary "$f" Success)" != 1 ]; then
    echo "  hpcc $alloc round $round: exit $rc, Success=$(summary "$f" Success) (see $OUT/$round-$alloc-hpcc.out)" >&2
    failed=1; return
  fi
  cp "$f" "$OUT/$round-$alloc-hpccoutf.txt"
  row hpcc all wall s lower "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
  local phase key unit better
  while read -r phase key unit better; do
    row hpcc "$phase" "$key" "$unit" "$better" "$(summary "$f" "$key")"
  done <<<"$HPCC_METRICS"
  # where the wall time goes: each section's seconds between hpcc's "Current time (EPOCH)" stamps (1 s steps;
  # set-up and checks included, which the rates above leave out)
  local section seconds
  while read -r section seconds; do
    row hpcc "$section" "${section}_wall" s lower "$seconds"
  done <<<"$(awk '/^Begin of .* section/ { s = $3 }
                  /^Current time \(/ { t = substr($3, 2) + 0; if (p && s != "Summary") print s, t - p; p = t }' "$f")"
  rm -rf "$dir"
}

run_netpipe() {
  local dir=$OUT/work-$round-$alloc-np t0 t1
  rm -rf "$dir"; mkdir -p "$dir"
  t0=$(date +%s.%N)
  # -p 0: powers of two and their 1.5x only; -n: a fixed repeat count (its own calibration runs long on a busy host)
  (cd "$dir" && launch "$alloc" NPopenmpi -p 0 -l 8 -u "$NP_MAX" -n "$NP_REPEATS" -o np.out) >"$OUT/$round-$alloc-netpipe.out" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  if [ $rc != 0 ] || [ ! -s "$dir/np.out" ]; then
    echo "  NetPIPE $alloc round $round: exit $rc (see $OUT/$round-$alloc-netpipe.out)" >&2; failed=1; return
  fi
  cp "$dir/np.out" "$OUT/$round-$alloc-np.out"
  row netpipe all wall s lower "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
  # np.out: bytes, Mbps, seconds per one-way transfer
  row netpipe latency latency_8B us lower "$(awk '$1 == 8 { printf "%.3f", $3 * 1e6 }' "$dir/np.out")"
  local size
  for size in 65536 1048576 "$NP_MAX"; do
    row netpipe bandwidth "bandwidth_${size}B" Mbit/s higher "$(awk -v s="$size" '$1 == s { print $2 }' "$dir/np.out")"
  done
  rm -rf "$dir"
}

CONFIGS=(glibc glibc+settings pinarena)
for ((round = 1; round <= ROUNDS; round++)); do
  order=()
  for ((i = 0; i < ${#CONFIGS[@]}; i++)); do order+=("${CONFIGS[(i + round - 1) % ${#CONFIGS[@]}]}"); done
  for app in $APPS; do
    for alloc in "${order[@]}"; do
      echo "  [$WHERE round $round/$ROUNDS] $app under $alloc" >&2
      "run_$app"
    done
  done
done
echo "  $(($(wc -l <"$CSV") - 1)) rows: $CSV" >&2
exit $failed
