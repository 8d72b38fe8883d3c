/*
 * fstat -- fstat() of an open file: a system call that takes a file
 * descriptor and reads an inode's attributes.  The file is the program
 * itself (argv[0]) when that can be opened, else /.  Run by par
 * (BENCH_INSTANCE=i in the environment), it makes and uses a file of its
 * own instead, /tmp/fstat.i, so that the instances share no inode
 * (Tornado's independent fstat, seed 004, 7.2).
 *
 * System calls: open, fstat, close, clock_gettime, write, exit_group.
 */
#include "bench.h"
#include <fcntl.h>
#include <sys/stat.h>

const char bench_name[] = "fstat";

static int fd = -1;

long long measure(long n)
{
	struct stat st;
	long long start = bench_now_ns();

	for (long i = 0; i < n; i++) {
		if (syscall(SYS_fstat, fd, &st) < 0)
			return -errno;
	}
	return bench_now_ns() - start;
}

int main(int argc, char **argv)
{
	const char *instance = getenv("BENCH_INSTANCE");
	char own[64];

	if (instance) {
		snprintf(own, sizeof own, "/tmp/fstat.%s", instance);
		fd = syscall(SYS_open, own, O_RDWR | O_CREAT, 0600);
		if (fd >= 0)
			syscall(SYS_unlink, own);
	} else {
		fd = syscall(SYS_open, argv[0], O_RDONLY, 0);
	}
	if (fd < 0)
		fd = syscall(SYS_open, "/", O_RDONLY, 0);
	if (fd < 0)
		bench_fail("open", errno);
	int status = bench_main(argc, argv);
	syscall(SYS_close, fd);
	return status;
}
