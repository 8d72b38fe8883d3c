# sh_gmake: Debian's GNU make (dynamic, glibc), run through its own loader
# from tests/gmake (tools/gmake_bundle.py), builds a small tree: recipes run
# (glibc's posix_spawn: clone3 and rseq may be ENOSYS, then clone with a
# child stack), a target is up to date the second time, a failing recipe
# stops make with status 2, -j2 runs two recipes, and $(shell) works.
# Ends with "N passed, N failed".

. "$(dirname "$0")/ut.inc"
G=$(cd "$(dirname "$0")/.." && pwd)/gmake
ut_begin sh_gmake
if [ ! -x "$G/make" ] || [ ! -x "$G/ld.so" ]; then
	echo "SKIP sh_gmake: no GNU make bundle in $G (tools/gmake_bundle.py)"
	ut_end
	exit $?
fi

# A make that runs this test (make check) passes its flags and level down
# in the environment; the make under test must start afresh.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES GNUMAKEFLAGS
gmake() { "$G/ld.so" --library-path "$G" "$G/make" "$@"; }

printf 'hello\n' > in.txt
printf 'all: out.txt\n\techo built $@\nout.txt: in.txt\n\tcat in.txt > out.txt\n\techo copied\n' > Makefile
gmake > log 2> err
st=$?
if grep -q "Function not implemented" err; then
	# posix_spawn's child resets its ids with setresuid; a kernel
	# without it cannot run recipes at all.
	echo "SKIP sh_gmake: make cannot start recipes here: $(head -n 1 err)"
	ut_end
	exit $?
fi
eq "make runs" 0 "$st"
eq "recipes ran in order" "cat in.txt > out.txt
echo copied
copied
echo built all
built all" "$(cat log)"
eq "the target was made" "hello" "$(cat out.txt)"
gmake out.txt > log 2> err
eq "up to date" "make: 'out.txt' is up to date." "$(cat log)"

printf 'bad:\n\tfalse\n\techo never\n' > Makefile.bad
gmake -f Makefile.bad > log 2> err
eq "a failing recipe: status 2" 2 "$?"
ok "the next line did not run" not grep -q never log

printf 'all: a b\na:\n\techo a > a\nb:\n\techo b > b\nv := $(shell echo shell-works)\nshow:\n\t@echo $(v)\n' > Makefile.j
gmake -j2 -f Makefile.j > log 2> err
eq "make -j2" 0 "$?"
eq "both recipes ran" "a b" "$(cat a) $(cat b)"
eq "\$(shell)" "shell-works" "$(gmake -s -f Makefile.j show 2> /dev/null)"

ut_end
