#include "square.h"

int printf(const char *, ...);

int main(void)
{
	printf("square 7 = %d, cube 3 = %d\n", square(7), cube(3));
	return cube(2) == 8 ? 0 : 1;
}
