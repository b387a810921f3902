#!/bin/sh
# make install-test: install into a temporary prefix (and once more under a DESTDIR), build a program
# against `pkg-config --cflags --libs pinarena` alone, run it, run a plain program with the shim preloaded
# from the prefix through the installed `pinarena exec`, run the installed `pinarena info`, and uninstall.
#   tests/install/run.sh BUILD
# Prints PASS/FAIL per check and "N passed, N failed"; exit 1 on any failure.
set -u
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
TMP=$(mktemp -d /tmp/pinarena-install-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
pass() { echo "PASS install: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL install: $1: $2"; failed=$((failed + 1)); }
check() { name=$1; shift; if "$@" >"$TMP/out" 2>&1; then pass "$name"; else fail "$name" "$(tail -5 "$TMP/out")"; fi; }

P=$TMP/prefix
make -s -C "$SRC" BUILD="$BUILD" install PREFIX="$P" >"$TMP/install.log" 2>&1 ||
  { cat "$TMP/install.log"; fail "make install" "exit non-zero"; echo "$passed passed, $failed failed"; exit 1; }

# The layout: the soname'd file, the development link, the header, the pc file with the real prefix.
check "libpinarena.so.0 is a file whose soname is libpinarena.so.0" \
  sh -c "[ -f '$P/lib/libpinarena.so.0' ] && [ ! -L '$P/lib/libpinarena.so.0' ] &&
         readelf -d '$P/lib/libpinarena.so.0' | grep -q 'SONAME.*\[libpinarena.so.0\]'"
check "libpinarena.so links to libpinarena.so.0" sh -c "[ \"\$(readlink '$P/lib/libpinarena.so')\" = libpinarena.so.0 ]"
for f in include/pinarena.h lib/pinarena/libpinarena-windows.so lib/pinarena/libpinarena-verbs-loopback.so \
         lib/pinarena/libpinarena-hooks.so bin/pinarena libexec/pinarena/pinarena-info \
         libexec/pinarena/pinarena-stale-demo share/pinarena/stacks.tsv share/man/man1/pinarena.1; do
  check "$f installed" test -s "$P/$f"
done
check "pinarena.pc names the prefix and nothing of the source tree" \
  sh -c "grep -qx 'prefix=$P' '$P/lib/pkgconfig/pinarena.pc' && ! grep -q '$SRC' '$P/lib/pkgconfig/pinarena.pc'"
check "no installed text file names the build or source tree" \
  sh -c "! grep -rlI -e '$SRC' -e '$BUILD' '$P'"

# A program built against the prefix alone: its include and link flags from pkg-config, run with no
# LD_LIBRARY_PATH (the run path from pinarena.pc finds libpinarena.so.0).
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
flags=$(pkg-config --cflags --libs pinarena)
check "pkg-config flags name only the prefix" sh -c "echo '$flags' | grep -q -- '-I$P/include' && ! echo '$flags' | grep -q '$SRC'"
check "hello builds with pkg-config's flags" sh -c "cc -o '$TMP/hello' '$HERE/hello.c' $flags"
check "hello records NEEDED libpinarena.so.0" sh -c "readelf -d '$TMP/hello' | grep -q 'NEEDED.*\[libpinarena.so.0\]'"
check "hello runs on the installed library, its block registered" \
  sh -c "env -u LD_PRELOAD -u LD_LIBRARY_PATH '$TMP/hello' | grep -q 'registered=1'"
check "hello's library is the installed one" \
  sh -c "env -u LD_PRELOAD LD_TRACE_LOADED_OBJECTS=1 '$TMP/hello' | grep -q 'libpinarena.so.0 => $P/lib/libpinarena.so.0'"

# A plain program (no link to pinarena) with the shim preloaded from the prefix by the installed command.
cc -o "$TMP/plain" -x c - -ldl <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  void* p = malloc(100);
  Dl_info i;
  int ok = dladdr(dlsym(RTLD_DEFAULT, "malloc"), &i);
  printf("malloc from %s\n", ok ? i.dli_fname : "?");
  free(p);
  return 0;
}
C
check "plain program under pinarena exec: malloc is the prefix's shim" \
  sh -c "env -u LD_PRELOAD '$P/bin/pinarena' exec -- '$TMP/plain' | grep -qx 'malloc from $P/lib/libpinarena.so.0'"
check "pinarena info from the prefix names the installed library and a registrar" \
  sh -c "'$P/bin/pinarena' info > '$TMP/info' && grep -qx 'library: $P/lib/libpinarena.so.0' '$TMP/info' &&
         grep -Eq '^registrar: (verbs|io_uring|mlock)$' '$TMP/info' && grep -q '^version: ' '$TMP/info'"
check "pinarena --help is the help text" sh -c "'$P/bin/pinarena' --help | grep -q 'pinarena exec \[--mpi ucx|ofi\]'"
# The stacks' settings (stacks.tsv) for a plain command, and for every rank of an mpirun through -x.
check "pinarena exec --verbose prints each setting and sets it" \
  sh -c "env -u LD_PRELOAD -u UCX_MEM_MMAP_HOOK_MODE '$P/bin/pinarena' exec --verbose -- sh -c 'echo \$UCX_MEM_MMAP_HOOK_MODE' \
         >'$TMP/v.out' 2>'$TMP/v.err' && grep -qx none '$TMP/v.out' &&
         grep -qx 'pinarena exec: UCX_MEM_MMAP_HOOK_MODE=none' '$TMP/v.err' &&
         grep -qx 'pinarena exec: OMPI_MCA_memory=^patcher' '$TMP/v.err'"
check "pinarena exec keeps a setting the user made" \
  sh -c "UCX_MEM_MALLOC_HOOKS=yes '$P/bin/pinarena' exec -- sh -c 'echo \$UCX_MEM_MALLOC_HOOKS' | grep -qx yes"
check "pinarena exec --no-shim: the settings, the program's own malloc" \
  sh -c "env -u LD_PRELOAD -u OMPI_MCA_memory '$P/bin/pinarena' exec --no-shim -- sh -c 'echo \$OMPI_MCA_memory; $TMP/plain' \
         >'$TMP/n.out' && grep -qxF '^patcher' '$TMP/n.out' && grep -q '^malloc from .*libc' '$TMP/n.out'"
check "pinarena exec --no-shim needs no library" \
  sh -c "PINARENA_LIB=$TMP/none.so '$P/bin/pinarena' exec --no-shim -- sh -c 'echo \$FI_MR_CACHE_MONITOR' | grep -qx disabled"
check "pinarena exec --mpi bad is refused" sh -c "! '$P/bin/pinarena' exec --mpi tcp -- true 2>'$TMP/e' && grep -q 'ucx or ofi' '$TMP/e'"
if command -v mpirun >/dev/null 2>&1; then
  check "pinarena exec --mpi ucx -- mpirun: every rank gets the shim and the settings, mpirun itself not" \
    sh -c "env -u LD_PRELOAD '$P/bin/pinarena' exec --mpi ucx -- mpirun --allow-run-as-root --oversubscribe -np 2 \
             sh -c 'echo rank \$OMPI_COMM_WORLD_RANK \$LD_PRELOAD \$OMPI_MCA_pml \$UCX_MEM_MALLOC_HOOKS \$OMPI_MCA_memory' \
             > '$TMP/mpi.out' 2>&1; grep -c '^rank [01] $P/lib/libpinarena.so.0 ucx no ^patcher\$' '$TMP/mpi.out' | grep -qx 2"
  check "pinarena exec --no-shim -- mpirun: every rank gets the settings, none the shim" \
    sh -c "env -u LD_PRELOAD '$P/bin/pinarena' exec --no-shim --mpi ofi -- mpirun --allow-run-as-root --oversubscribe -np 2 \
             sh -c 'echo rank \$OMPI_COMM_WORLD_RANK \${LD_PRELOAD:-none} \$OMPI_MCA_mtl \$FI_MR_CACHE_MONITOR \$OMPI_MCA_memory' \
             > '$TMP/mpin.out' 2>&1; grep -c '^rank [01] none ofi disabled ^patcher\$' '$TMP/mpin.out' | grep -qx 2"
else
  echo "SKIP install: pinarena exec -- mpirun: no mpirun on PATH (openmpi-bin)"
fi
# The refusal: a missing library is named, nothing is run.
check "pinarena exec refuses when the library is missing" \
  sh -c "PINARENA_LIB=$TMP/none.so '$P/bin/pinarena' exec -- touch '$TMP/ran'; rc=\$?;
         [ \$rc = 127 ] && [ ! -e '$TMP/ran' ]"

# DESTDIR stages, the files name the final prefix.
D=$TMP/stage
make -s -C "$SRC" BUILD="$BUILD" install PREFIX=/opt/pinarena DESTDIR="$D" >"$TMP/install2.log" 2>&1
check "DESTDIR: staged under DESTDIR, pc and command name the prefix" \
  sh -c "grep -qx 'prefix=/opt/pinarena' '$D/opt/pinarena/lib/pkgconfig/pinarena.pc' &&
         grep -q \"/opt/pinarena/lib/libpinarena.so.0\" '$D/opt/pinarena/bin/pinarena' && ! grep -rqI '$D' '$D'"

# Uninstall removes every file install wrote.
make -s -C "$SRC" BUILD="$BUILD" uninstall PREFIX="$P" >"$TMP/uninstall.log" 2>&1
check "uninstall leaves no file behind" sh -c "[ -z \"\$(find '$P' -type f -o -type l)\" ]"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
