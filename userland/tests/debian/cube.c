#include "square.h"

int cube(int x)
{
	return square(x) * x;
}
