/* exec_errno PROG: execs PROG and prints the errno's name when execve
 * fails (native.sh's bad-input checks), so the kernel's answer is checked
 * rather than a shell's message. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

static const char *errno_name(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case ENOEXEC: return "ENOEXEC";
	case ELIBBAD: return "ELIBBAD";
	case EACCES: return "EACCES";
	case EIO: return "EIO";
	default: return "other";
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: exec_errno PROG\n");
		return 2;
	}
	char *args[] = { argv[1], NULL };
	char *env[] = { NULL };
	execve(argv[1], args, env);
	printf("%s\n", errno_name(errno));
	return 1;
}
