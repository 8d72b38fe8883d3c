# Debian's gdb (issue 31) on a program Debian's gcc builds here: a break,
# a backtrace, variables, a step, a finish, the run to the end; addresses
# and the pid made constant; printed between markers.  Run inside Tempest
# by native.sh and on the Linux peer chrooted in the same Debian root;
# tests/debian_check.py compares the two.
echo gdb-begin
W=/tmp/gdb$$
mkdir -p $W && cd $W || exit 1
cat > debugee.c <<'EOF'
/* The program Debian's gdb debugs inside Tempest (native.sh): a break in
 * square, a backtrace through main, a step, two variables, the value
 * square returns, and the run to its end. */
#include <stdio.h>

static int square(int x)
{
    int y = x * x;
    return y;
}

int main(void)
{
    int n = 7;
    int s = square(n);
    printf("s=%d\n", s);
    return 0;
}
EOF
gcc -g -O0 -o debugee debugee.c
gdb -batch -nx -ex 'break square' -ex run -ex bt -ex 'print x' -ex next -ex 'print y' \
    -ex finish -ex continue ./debugee 2>&1 |
    sed -e 's/process [0-9]*/process N/' -e 's/0x[0-9a-f]*/ADDR/g' |
    grep -E '^(Breakpoint|#|[$]|Value|s=|\[Inferior|[0-9]+\s)'
echo "gdb $?"
echo gdb-end
cd / && rm -rf $W
