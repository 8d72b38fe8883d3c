# Run inside Tempest on the Debian root (make run USERLAND=debian) with
# this directory at D (default /add): Debian's own gcc, collect2, as, ld
# and make, unmodified, build a hello world (dynamic and -static) and a
# three-file project with make -j4; then bad programs: a missing
# interpreter, a corrupt one, a missing library.  Each step prints one
# line that tests/debian_check.py checks.
D=${D:-/add}
W=/tmp/native$$
mkdir -p $W && cd $W || exit 1
gcc -O2 -o hello "$D/hello.c"
echo "gcc $?"
./hello
echo "hello $?"
gcc -O2 -static -o hello-static "$D/hello.c"
echo "gcc-static $?"
./hello-static
echo "hello-static $?"
echo "interp $(readelf -l hello | grep -c 'Requesting program interpreter') $(readelf -l hello-static | grep -c 'Requesting program interpreter')"
cp "$D/main.c" "$D/square.c" "$D/cube.c" "$D/square.h" .
cp "$D/native.mk" Makefile
make -j4 > make.log 2>&1
echo "make $?"
./prog
echo "prog $?"
make
echo "again $?"
gcc -O2 -o exec_errno "$D/exec_errno.c" || echo "exec_errno not built"
gcc -O2 -Wl,--dynamic-linker=/nonexistent/ld.so -o no-interp "$D/hello.c"
echo "no-interp $(./exec_errno ./no-interp)"
# Longer than an ELF header (a shorter one is EIO on Linux).
echo "this is not an ELF file but text, longer than the 64 bytes of an ELF header" > junk.so
chmod 755 junk.so
gcc -O2 -Wl,--dynamic-linker=$W/junk.so -o bad-interp "$D/hello.c"
echo "bad-interp $(./exec_errno ./bad-interp)"
gcc -O2 -shared -fPIC -o libsquare.so square.c cube.c
gcc -O2 -o needs-lib main.c -L. -lsquare
LD_LIBRARY_PATH=. ./needs-lib
echo "needs-lib $?"
rm libsquare.so
./needs-lib 2> lib.err
echo "no-lib $?"
sed "s|$W|W|" lib.err
# Debian's Python over an AF_UNIX socketpair, and a child through a pipe
# (issue 31: docs/debian.md's first real program).
python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"hi"); print(b.recv(2))'
python3 -c 'import subprocess; print(subprocess.run(["echo", "sub"], capture_output=True).stdout)'
# Debian's numactl (issue 31): numa.sh, which the Linux peer runs too.
sh "$D/numa.sh"
# numactl's policies placing pages, and migratepages moving them, as
# /proc/PID/numa_maps and /proc/vmstat tell.
gcc -O2 -o pages "$D/pages.c"
numactl --membind=1 ./pages
numactl --interleave=0,1 ./pages
before=$(awk '/^pgmigrate_success/ {print $2}' /proc/vmstat)
numactl --membind=0 ./pages wait > pages.out &
pid=$!
while ! grep -q ready pages.out; do sleep 0.1; done
migratepages $pid 0 1
kill -USR1 $pid
wait $pid
grep -v ready pages.out
after=$(awk '/^pgmigrate_success/ {print $2}' /proc/vmstat)
echo "pgmigrate $((after - before >= 64))"
# Python's pty module (issue 31): a child on a pseudo-terminal.
python3 "$D/pty_echo.py" | sed 's|/dev/pts/[0-9]*|/dev/pts/N|'
# Debian's gdb (issue 31): gdb.sh, which the Linux peer runs too.
sh "$D/gdb.sh"
# Debian's strace (issue 31): strace.sh, which the Linux peer runs too.
sh "$D/strace.sh"
cd / && rm -rf $W
