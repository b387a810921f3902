#!/bin/busybox sh
# PID 1 of the softroce guest (runs from the initramfs, under busybox).
#
# Contract with the host script (testbed/softroce), all through the per-run
# 9p share with mount tag "run" (mounted at /share here):
#   in : job.sh   the command wrapper, run with bash inside the chroot
#        cwd      the caller's working directory (one line)
#        tmpbinds paths (one a line: the repository, the cwd) to show read-only when under /tmp
#        mounts   "TAG PATH" lines: writable 9p shares to mount at PATH
#        net      optional: "ip ADDR", "hostname NAME", "host ADDR NAME" lines (a guest on a shared network)
#   out: stdout, stderr   the command's output (appended, so the host can tail them live)
#        status           the command's exit status, written once it has finished
#        setup-error      one line, when the guest could not be set up
# Everything this script itself prints goes to the serial console, i.e. the boot log.

/bin/busybox --install -s /bin
export PATH=/bin

log() { echo "softroce-init: $*"; }

# Report a setup failure to the host (if the share is up) and power off.
fail() {
    log "FATAL: $*"
    dmesg | tail -n 30 | sed 's/^/softroce-init: dmesg: /'
    [ -d /share ] && echo "$*" > /share/setup-error 2>/dev/null
    sync
    poweroff -f
}

# 9p options: msize raises the per-request size from the small default (large reads are
# much faster; the kernel clamps it to what virtio allows).
NINEP="trans=virtio,version=9p2000.L,msize=512000"

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

# Modules, in dependency order as resolved on the host from modules.dep.
while read -r name file; do
    insmod "/modules/$file" || fail "insmod $name ($file) failed"
done < /modules/order
log "modules loaded"

mkdir -p /share /mnt /oldtmp
mount -t 9p -o "$NINEP" run /share || fail "cannot mount the per-run share (tag run)"
# cache=loose on the read-only root: the guest caches file data and lookups instead of asking the
# host each time (JVM start + class scanning ~2.5x faster). The price: a host file changed during the
# run may look stale in the guest. The per-run and --rw shares stay uncached (writes reach the host at once).
mount -t 9p -o "$NINEP,ro,cache=loose" host /mnt || fail "cannot mount the host root (tag host)"

mount -t proc proc /mnt/proc
mount -t sysfs sys /mnt/sys
mount -t devtmpfs dev /mnt/dev
mkdir -p /mnt/dev/shm /mnt/dev/pts
mount -t tmpfs -o mode=1777 shm /mnt/dev/shm          # POSIX shm (mpirun needs it)
mount -t devpts -o newinstance,ptmxmode=0666 devpts /mnt/dev/pts
# The host's /tmp stays reachable read-only through /oldtmp (for a cwd under /tmp),
# the chroot gets a fresh writable /tmp (and /run, /var/tmp).
mount --bind /mnt/tmp /oldtmp
mount -t tmpfs -o mode=1777 tmp /mnt/tmp
mount -t tmpfs -o mode=755 run /mnt/run
mount -t tmpfs -o mode=1777 vartmp /mnt/var/tmp

# Hostname resolvable (mpirun needs it); /etc/hosts itself is read-only over 9p.
# A guest on a network shared with other guests gets its address, name and its peers' names from /share/net.
GUEST_IP=10.0.2.15 GUEST_NAME=softroce
if [ -f /share/net ]; then
    GUEST_IP=$(sed -n 's/^ip //p' /share/net)
    GUEST_NAME=$(sed -n 's/^hostname //p' /share/net)
fi
hostname "$GUEST_NAME"
mkdir -p /etc-rw
if [ -f /share/net ]; then   # its own name on its network address, where its peers reach it
    printf '127.0.0.1\tlocalhost\n%s\t%s\n' "$GUEST_IP" "$GUEST_NAME" > /etc-rw/hosts
    sed -n 's/^host \([^ ]*\) \(.*\)$/\1\t\2/p' /share/net >> /etc-rw/hosts
else
    printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$GUEST_NAME" > /etc-rw/hosts
fi
mount --bind /etc-rw/hosts /mnt/etc/hosts

# The repository and the cwd, when they are under the host's /tmp: show them (read-only) at the same
# paths (the repository first: the cwd is usually inside it and then already visible).
while read -r path; do
    case "$path" in
        /tmp/*)
            [ -d "/mnt$path" ] && [ -n "$(ls -A "/mnt$path" 2>/dev/null)" ] && continue
            mkdir -p "/mnt$path"
            [ -d "/oldtmp${path#/tmp}" ] && mount --bind "/oldtmp${path#/tmp}" "/mnt$path"
            ;;
    esac
done < /share/tmpbinds

# Caller-requested writable directories, at the same path as on the host
# (listed shortest path first, so nested ones end up on top).
while read -r tag path; do
    [ -n "$tag" ] || continue
    mkdir -p "/mnt$path" 2>/dev/null
    mount -t 9p -o "$NINEP" "$tag" "/mnt$path" || fail "cannot mount writable share $tag at $path"
done < /share/mounts

# Soft-RoCE: an rxe device on top of the virtio NIC. Traffic stays guest-local
# (qemu's user network is started with restrict=on).
ip link set lo up
ip link set eth0 up || fail "no eth0 (virtio_net not working?)"
ip addr add "$GUEST_IP/24" dev eth0
chroot /mnt rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 50 ] && fail "rxe0 did not become PORT_ACTIVE within 5 s"
    sleep 0.1
done
log "rxe0 active"

# The job itself; the per-run share is visible inside the chroot as /tmp/.softroce.
mkdir -p /mnt/tmp/.softroce
mount --bind /share /mnt/tmp/.softroce
chroot /mnt /usr/bin/env -i /bin/bash /tmp/.softroce/job.sh \
    >> /share/stdout 2>> /share/stderr < /dev/null
rc=$?
echo "$rc" > /share/status.tmp && mv /share/status.tmp /share/status
log "job finished with status $rc"

sync
umount /mnt/tmp/.softroce 2>/dev/null
poweroff -f
