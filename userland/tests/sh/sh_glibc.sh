# sh_glibc: glibc's dynamic programs, started by the kernel through their
# PT_INTERP (tools/glibc_bundle.py made them with the host's gcc; the
# bundle in tests/glibc holds glibc's loader as ld.so, and the programs
# name "./ld.so", so they run from there):
#   - a PIE and an ET_EXEC program print their checks (auxiliary vector,
#     malloc with mmap and mremap, glibc's string functions) and exit 0;
#   - glibc counts AVX2 active when the CPU has it (XSAVE enabled);
#   - a program whose library is missing gets ld.so's own message and
#     status 127, not a kernel fault;
#   - ld.so run by name loads an ET_EXEC program at 0x400000 (the loader
#     sits elsewhere), as Debian's cc1 is; with a bundle made with --cc1,
#     the host's cc1 run so compiles a file.
# Ends with "N passed, N failed".

. "$(dirname "$0")/ut.inc"
G=$(cd "$(dirname "$0")/.." && pwd)/glibc
ut_begin sh_glibc
if [ ! -x "$G/gprog" ] || [ ! -x "$G/ld.so" ]; then
	echo "SKIP sh_glibc: no glibc bundle in $G (tools/glibc_bundle.py)"
	ut_end
	exit $?
fi
W=$(pwd)
want="ok auxv
ok malloc
ok strings
stdio 42 text 2.50"

cd "$G" || exit 1
out=$(./gprog 2> "$W/err")
eq "the PIE ran" 0 "$?"
eq "the PIE's checks" "$want" "$out"
out=$(./gprog_np 2> "$W/err")
eq "the ET_EXEC program ran" 0 "$?"
eq "the ET_EXEC program's checks" "$want" "$out"
out=$(./ld.so --library-path . ./gprog_np --by-loader 2> "$W/err")
eq "ld.so by name ran the ET_EXEC program" 0 "$?"
eq "its checks" "$want" "$out"

./gmissing > "$W/out" 2> "$W/err"
eq "a missing library: status 127" 127 "$?"
ok "ld.so's own message" grep -q "error while loading shared libraries: libgmiss.so.1" "$W/err"

# glibc's own view of the CPU: when CPUID offers AVX2 (leaf 7, EBX bit 5),
# the kernel's XSAVE set-up (XCR0 with AVX) must let glibc count it
# active and prefer its AVX string functions, as on Linux.
diag=$(./ld.so --list-diagnostics 2> /dev/null)
word() { echo "$diag" | sed -n "s/^x86.cpu_features.$1=//p"; }
cpu7=$(word 'features\[0x1\].cpuid\[0x1\]')
if [ -n "$cpu7" ] && [ $((cpu7 & 32)) -ne 0 ]; then
	eq "glibc counts AVX2 active" 32 $(($(word 'features\[0x1\].active\[0x1\]') & 32))
	eq "glibc prefers AVX loads" 0x1 "$(word preferred.AVX_Fast_Unaligned_Load)"
fi

# The host's cc1, when the bundle has it (glibc_bundle.py --cc1).
if [ -x ./cc1 ]; then
	./ld.so --library-path . ./cc1 -quiet -nostdinc cc1_in.c -o "$W/cc1.s" 2> "$W/err"
	eq "cc1 compiled" 0 "$?"
	ok "cc1's assembly has the function" grep -q "^square:" "$W/cc1.s"
fi
cd "$W" || exit 1
ut_end
