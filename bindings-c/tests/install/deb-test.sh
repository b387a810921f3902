#!/bin/sh
# make deb-test: the package in a clean Debian root. A minbase root of this machine's release
# (debootstrap from the Debian mirror apt already uses), with Open MPI added (the MPI a user would run),
# is built once and cached (PINARENA_DEBROOT_CACHE, default <repository>/target/debroot; ~3 min the first
# time); each run copies it, installs the package with `apt-get install ./pinarena_*.deb` in a chroot and
# runs, from the installed files only: pinarena info, pinarena demo, and an MPI job of two ranks launched
# with `pinarena exec -- mpirun` (tests/install/mpi_hello.c, built here with mpicc: it links no pinarena).
# Then `apt-get remove` must leave none of the package's files.
#   tests/install/deb-test.sh PACKAGE_DIR BUILD
# Prints PASS/FAIL per check and "N passed, N failed"; exit 1 on any failure (a root that cannot be built is
# a failure, with the reason).
set -u
PKG_DIR=$1 BUILD=$2
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
CACHE=${PINARENA_DEBROOT_CACHE:-$REPO/target/debroot}
passed=0 failed=0
pass() { echo "PASS deb: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL deb: $1: $2"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }

[ "$(id -u)" = 0 ] || { fail "clean root" "needs root (debootstrap, chroot)"; finish; }
for tool in debootstrap unshare chroot mpicc; do
  command -v $tool >/dev/null 2>&1 || { fail "clean root" "$tool not found (Debian packages debootstrap, util-linux, libopenmpi-dev)"; finish; }
done
deb=$(ls "$PKG_DIR"/pinarena_*_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { fail "package" "no pinarena_*.deb in $PKG_DIR"; finish; }

. /etc/os-release
SUITE=$VERSION_CODENAME
# The mirror apt uses here for the release (deb822 or one-line sources).
MIRROR=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }')
[ -n "$MIRROR" ] || MIRROR=$(grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '$2 !~ /security/ { print $2; exit }')
[ -n "$MIRROR" ] || { fail "clean root" "no Debian mirror in /etc/apt sources"; finish; }

# chroot_run ROOT COMMAND...: COMMAND inside ROOT with /proc, /dev and /sys, in a private mount namespace
# (the mounts go away with it).
chroot_run() {
  root=$1; shift
  unshare --mount --fork sh -c 'r=$1; shift; mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" &&
    mount --rbind /sys "$r/sys" && exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    DEBIAN_FRONTEND=noninteractive "$@"' _ "$root" "$@"
}

BASE=$CACHE/$SUITE-minbase MPI_ROOT=$CACHE/$SUITE-mpi
mkdir -p "$CACHE"
if [ ! -e "$BASE/.complete" ]; then
  echo "deb-test: building the $SUITE minbase root in $BASE (once)" >&2
  rm -rf "$BASE.tmp"
  debootstrap --variant=minbase "$SUITE" "$BASE.tmp" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
    { fail "clean root" "debootstrap failed: $(tail -3 "$CACHE/debootstrap.log")"; finish; }
  rm -rf "$BASE" && mv "$BASE.tmp" "$BASE" && touch "$BASE/.complete"
fi
if [ ! -e "$MPI_ROOT/.complete" ]; then
  echo "deb-test: adding Open MPI to a copy of the root in $MPI_ROOT (once)" >&2
  rm -rf "$MPI_ROOT.tmp" && cp -a "$BASE" "$MPI_ROOT.tmp" && rm -f "$MPI_ROOT.tmp/.complete"
  cp /etc/resolv.conf "$MPI_ROOT.tmp/etc/resolv.conf" 2>/dev/null
  chroot_run "$MPI_ROOT.tmp" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends openmpi-bin' \
    >"$CACHE/mpi-root.log" 2>&1 || { fail "clean root" "openmpi-bin: $(tail -3 "$CACHE/mpi-root.log")"; finish; }
  chroot_run "$MPI_ROOT.tmp" apt-get clean
  rm -rf "$MPI_ROOT" && mv "$MPI_ROOT.tmp" "$MPI_ROOT" && touch "$MPI_ROOT/.complete"
fi

R=$BUILD/deb-test-root
rm -rf "$R" && cp -a "$MPI_ROOT" "$R" || { fail "clean root" "cannot copy $MPI_ROOT"; finish; }
trap 'rm -rf "$R"' EXIT
[ -n "${PINARENA_DEB_TEST_KEEP:-}" ] && trap - EXIT
check() { name=$1; shift; if "$@" >"$R/tmp/out" 2>&1; then pass "$name"; else fail "$name" "$(tail -5 "$R/tmp/out")"; fi; }

check "the root has no pinarena before" sh -c "! chroot '$R' dpkg -s pinarena >/dev/null 2>&1 && [ ! -e '$R/usr/bin/pinarena' ]"
cp "$deb" "$R/tmp/"
check "apt-get install ./$(basename "$deb")" chroot_run "$R" apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")"
check "dpkg knows the files: libpinarena.so.0 in the multiarch libdir, ldconfig finds it" \
  sh -c "chroot '$R' dpkg -L pinarena | grep -q '/usr/lib/.*-linux-gnu/libpinarena.so.0\$' &&
         chroot '$R' /sbin/ldconfig -p | grep -q 'libpinarena.so.0 '"
chroot_run "$R" pinarena info >"$R/tmp/info" 2>&1
if grep -Eq '^library: /usr/lib/[^ ]*/libpinarena.so.0$' "$R/tmp/info" && grep -Eq '^registrar: (verbs|io_uring|mlock)$' "$R/tmp/info"
then pass "pinarena info output"; else fail "pinarena info output" "$(cat "$R/tmp/info")"; fi
chroot_run "$R" pinarena demo >"$R/tmp/demo" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q 'plain malloc exit 1 (1: stale bytes sent), pinarena exit 0' "$R/tmp/demo"
then pass "pinarena demo: plain malloc sends stale bytes, the installed shim the new ones"
else fail "pinarena demo" "exit $rc: $(tail -4 "$R/tmp/demo")"; fi

mpicc -O2 -o "$R/tmp/mpi_hello" "$HERE/mpi_hello.c" -ldl || fail "mpi_hello" "mpicc failed"
chroot_run "$R" pinarena exec --verbose -- mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader \
  /tmp/mpi_hello >"$R/tmp/mpi" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^rank=[01] shim=1 registered=1 received=[ok-]* memory=^patcher$' "$R/tmp/mpi")" = 2 ] &&
   grep -q '^rank=1 .*received=ok' "$R/tmp/mpi"
then pass "MPI job (2 ranks) under the installed pinarena exec: both ranks on the shim, registered, bytes intact"
else fail "MPI job" "exit $rc: $(tail -8 "$R/tmp/mpi")"; fi

check "apt-get remove pinarena leaves none of its files" \
  sh -c "chroot '$R' dpkg -L pinarena | sed 's|^|$R|' > '$R/tmp/files' && chroot '$R' apt-get remove -y -q pinarena >/dev/null &&
         ! xargs -a '$R/tmp/files' sh -c 'for f; do [ -f \"\$f\" ] || [ -L \"\$f\" ] && echo \"\$f\"; done' _ | grep ."
finish
