#!/usr/bin/env bash
# perf/guest-steps.sh ROOT RESULTS CURVE_MAX_MIB CURVE_REPS MPI_OUT — the bench's rxe0 measurements, run INSIDE
# one Soft-RoCE guest (perf/bench boots it once for all of them; RESULTS and MPI_OUT are writable there):
# the verbs registration cost curve (RESULTS/reg-cost-verbs.csv), then the MPI savings loops
# (MPI_OUT/savings.csv). Each part prints its seconds; one that fails leaves its file out (the report says so)
# and the next still runs. Exit status 1 if any part failed.
set -uo pipefail
ROOT=$1 RESULTS=$2 CURVE_MAX_MIB=$3 CURVE_REPS=$4 MPI_OUT=$5
failed=0
part() { # part NAME COMMAND...: runs it, prints its time
  local began=$SECONDS
  if "${@:2}"; then echo "  $1: $((SECONDS - began))s" >&2
  else echo "  $1 failed after $((SECONDS - began))s" >&2; failed=1; return 1; fi
}

if part "verbs curve" "$ROOT/bindings-c/target/pinarena-rdma-loopback" cost -m "$CURVE_MAX_MIB" -r "$CURVE_REPS" \
     > "$RESULTS/reg-cost-verbs.csv"; then
  echo "  $(grep -c '^verbs,' "$RESULTS/reg-cost-verbs.csv") verbs rows"
else
  rm -f "$RESULTS/reg-cost-verbs.csv"
fi
part "MPI savings" "$ROOT/bindings-c/tests/mpi/run.sh" "$ROOT/bindings-c/target/mpi" \
  "$ROOT/bindings-c/target/libpinarena.so" "$MPI_OUT" savings
exit "$failed"
