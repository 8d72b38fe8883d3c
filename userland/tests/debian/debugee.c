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
