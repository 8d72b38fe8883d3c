# Debian's strace (issue 31): a busybox pipeline traced, one file per
# process, printed between markers.  Run inside Tempest by native.sh and
# on the Linux peer chrooted in the same Debian root; tests/debian_check.py
# compares each process's calls between the two, and with the host
# Linux's strace of the same static busybox.
echo strace-begin
W=/tmp/strace$$
mkdir -p $W && cd $W || exit 1
strace -ff -o tr busybox sh -c 'busybox echo hello | busybox tr a-z A-Z'
echo "strace $?"
for f in tr.*; do echo "== trace"; cat "$f"; done
echo strace-end
cd / && rm -rf $W
