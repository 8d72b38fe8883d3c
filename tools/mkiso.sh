#!/bin/sh
# mkiso.sh KERNEL ISO "OPTIONS": make a GRUB 2 (Multiboot2) boot ISO whose
# single menu entry boots KERNEL with the kernel command line OPTIONS.
# The ISO's copy has no debug information (a third of the size: GRUB and
# the firmware read less at every boot); gdb reads KERNEL itself, beside
# it, and the kernel's own symbol table (.ksyms) stays in the copy.
set -e
kernel=$1 iso=$2 opts=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/boot/grub"
objcopy --strip-debug "$kernel" "$dir/boot/tempest.elf"
cat > "$dir/boot/grub/grub.cfg" <<CFG
set timeout=0
set default=0
serial --unit=0 --speed=115200
terminal_output console
menuentry "Tempest" {
    multiboot2 /boot/tempest.elf $opts
    boot
}
CFG
grub-mkrescue -o "$iso" "$dir" >/dev/null 2>&1 || { grub-mkrescue -o "$iso" "$dir"; exit 1; }
