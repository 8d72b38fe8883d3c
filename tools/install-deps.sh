#!/bin/sh
# Install the Debian packages Tempest needs to build, boot and test, if any
# are missing.  Run by the make targets; safe to run again (it only calls
# apt-get when something is absent).
set -e
PKGS="build-essential nasm grub-pc-bin grub-common xorriso mtools qemu-system-x86
      qemu-utils bochs bochsbios vgabios bochs-x python3 gdb musl-tools busybox-static
      python3-matplotlib python3-dask python3-distributed chromium makefs patchelf
      sysbench strace e2fsprogs redis-server"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
