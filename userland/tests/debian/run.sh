# Run inside Tempest from the bundle of tools/debian_s5_bundle.py (at G,
# default /add): Debian's gcc, as and ld build hello.c, and Debian's make
# -j4 builds the project of Makefile; each step prints one line that
# tests/debian_check.py checks.
G=${G:-/add}
W=/tmp/deb$$
mkdir -p $W && cd $W || exit 1
"$G/gcc" -B"$G/" -nostdinc -c "$G/hello.c" -o hello.o
echo "cc $?"
"$G/ld" -dynamic-linker "$G/ld.so" -rpath "$G" -o hello "$G/crt1.o" "$G/crti.o" \
	"$G/crtbegin.o" hello.o "$G/libc.so.6" "$G/ld.so" "$G/libcns.a" "$G/libgcc.a" \
	"$G/crtend.o" "$G/crtn.o"
echo "ld $?"
./hello
echo "hello $?"
cp "$G/Makefile" "$G/main.c" "$G/square.c" "$G/cube.c" "$G/square.h" .
"$G/make" -j4 G="$G" > make.log 2>&1
echo "make $?"
./prog
echo "prog $?"
"$G/make" G="$G"
echo "again $?"
cd / && rm -rf $W
