# Debian's numactl (issue 31): the preset's nodes, CPUs and SLIT distances
# as /sys gives them, and a policy --membind sets, kept across exec,
# printed between markers.  Run inside Tempest by native.sh and on the
# Linux peer chrooted in the same Debian root; tests/debian_check.py
# compares the two (and Tempest's with the preset's own figures).
echo numactl-begin
numactl --hardware | grep -v -e size -e free
numactl --membind=1 --cpunodebind=0 numactl --show | grep -e '^policy' -e '^membind' -e '^cpubind'
echo numactl-end
