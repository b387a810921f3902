#!/bin/sh
# make package (./pinarena package): pinarena_<version>_<arch>.deb from make install PREFIX=/usr into a
# staging root, with dpkg-deb. Depends are read off the staged binaries: libc6 at the newest GLIBC_ symbol
# version they reference, libibverbs1 when one of them links it.
#   tools/make-deb.sh BUILD OUTDIR    -> OUTDIR/pinarena_<version>_<arch>.deb (its path on stdout)
set -eu
BUILD=$1 OUT=$2
SRC=$(cd "$(dirname "$0")/.." && pwd)
VERSION=$(cat "$SRC/VERSION")
ARCH=$(dpkg --print-architecture)
MULTIARCH=$(${CC:-gcc} -print-multiarch)
STAGE=$OUT/stage
rm -rf "$STAGE"
mkdir -p "$STAGE/DEBIAN"
make -s -C "$SRC" BUILD="$BUILD" install DESTDIR="$STAGE" PREFIX=/usr LIBDIR="/usr/lib/$MULTIARCH" >&2

elves=$(find "$STAGE/usr" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
glibc=$(for f in $elves; do objdump -T "$f"; done | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
depends="libc6 (>= $glibc)"
for f in $elves; do readelf -d "$f"; done | grep -q 'NEEDED.*\[libibverbs.so.1\]' && depends="$depends, libibverbs1"
size=$(du -sk "$STAGE/usr" | cut -f1)
cat > "$STAGE/DEBIAN/control" <<CONTROL
Package: pinarena
Version: $VERSION
Architecture: $ARCH
Maintainer: pinarena developers <pinarena@localhost>
Installed-Size: $size
Depends: $depends
Recommends: ibverbs-providers
Suggests: openmpi-bin
Section: libs
Priority: optional
Description: malloc shim serving every allocation from registered (pinned) memory
 libpinarena.so.0 replaces malloc (LD_PRELOAD or linked) with chunks registered for RDMA (verbs,
 io_uring or mlock) that are never returned to the OS unannounced, so address-keyed registration caches
 never send stale bytes. pinarena exec runs a program or an MPI job on it with the stacks' memory hooks
 off; pinarena info reports what it chooses on this machine.
CONTROL
echo "activate-noawait ldconfig" > "$STAGE/DEBIAN/triggers"
chmod 644 "$STAGE/DEBIAN/control" "$STAGE/DEBIAN/triggers"
deb=$OUT/pinarena_${VERSION}_${ARCH}.deb
dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$deb" >&2
echo "$deb"
