#!/usr/bin/env bash
# perf/guest-steps.sh ROOT RESULTS CURVE_MAX_MIB CURVE_REPS MPI_OUT [APP_ROUNDS APPS_OUT] — the bench's rxe0
# measurements, run INSIDE one Soft-RoCE guest (perf/bench boots it once for all of them; RESULTS, MPI_OUT and
# APPS_OUT are writable there): the verbs registration cost curve (RESULTS/reg-cost-verbs.csv), the MPI savings
# loops (MPI_OUT/savings.csv), then with APP_ROUNDS real MPI applications under glibc and the shim
# (perf/mpi-apps/run.sh rxe0: APPS_OUT/mpi-apps.csv; MPI_APPS picks them). Each part prints its seconds; one that fails leaves its file out (the report says so)
# and the next still runs. Exit status 1 if any part failed.
set -uo pipefail
ROOT=$1 RESULTS=$2 CURVE_MAX_MIB=$3 CURVE_REPS=$4 MPI_OUT=$5 APP_ROUNDS=${6:-} APPS_OUT=${7:-}
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
if [ -n "$APP_ROUNDS" ]; then
  part "MPI applications" "$ROOT/perf/mpi-apps/run.sh" rxe0 "$APP_ROUNDS" "$APPS_OUT"
fi
exit "$failed"
