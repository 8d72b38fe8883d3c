/* Compiled, assembled and linked inside Tempest by Debian's gcc, as and ld
 * (run.sh).  No #include: glibc's headers have names longer than S5's. */
int puts(const char *);

int main(void)
{
	puts("hello from Debian's gcc");
	return 0;
}
