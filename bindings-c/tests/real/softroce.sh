#!/usr/bin/env bash
# The shim's verbs registrar on a real kernel verbs stack (Soft-RoCE VM):
#   bindings-c/tests/real/softroce.sh BUILD_DIR              boots the VM for these checks alone (~15 s)
#   bindings-c/tests/real/softroce.sh --in-guest BUILD_DIR   already in the guest (make vm-test's one boot)
# auto picks verbs (rxe0), every 1 MiB block is registered, and pinarena_set_pd
# adopts the application's PD (chunks registered before are moved to it).
set -uo pipefail
in_guest=0
[ "${1:-}" = --in-guest ] && { in_guest=1; shift; }
B=$(cd "${1:?BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
SOFTROCE=${SOFTROCE:-$ROOT/testbed/softroce}
probes="env LD_PRELOAD=$B/libpinarena.so $B/pinarena-shim-probe 8; echo rc1=\$?
  env LD_PRELOAD=$B/libpinarena.so $B/pinarena-shim-probe 8 verbs; echo rc2=\$?"
if ((in_guest)); then
  out=$(sh -c "$probes" 2>&1)
else
  out=$("$SOFTROCE" -- sh -c "$probes" 2>&1)
fi
echo "$out" | sed 's/^/      /'
passed=0 failed=0
check() { if echo "$out" | grep -q "$2"; then echo "PASS $1"; passed=$((passed+1)); else echo "FAIL $1: no '$2'"; failed=$((failed+1)); fi; }
check softroce_auto_picks_verbs "registrar=verbs .*unregistered_chunks=0"
check softroce_all_blocks_registered "registered_blocks=8 unregistered_blocks=0"
check softroce_set_pd_adopts "set_pd=0 pd_adopted=yes early_lookup=0 backend=1"
check softroce_exit_codes "rc2=0"
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
