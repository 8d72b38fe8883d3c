/* The source sh_glibc.sh compiles with the host's cc1 inside Tempest. */
int square(int x)
{
	return x * x;
}

int main(void)
{
	return square(7) == 49 ? 0 : 1;
}
