/*
 * files -- a file's everyday use: look it up by name (stat), open it,
 * read its first 4 KiB, close it.  The file is made and written once,
 * outside the timed part: no operation creates or removes a name or
 * writes (on Tempest under icount each of those waits for the disk, as
 * a synchronous write with syncwrites=on or a page's write-back, which
 * would measure the disk's emulation, not the kernel).  One operation is
 * those four system calls; they go through the name cache, the directory, the inode
 * cache and the file's pages, so this is the file-system workload the
 * lock statistics' cost is measured on (bench/lockcost.py, issue 17).
 * Run by par (BENCH_INSTANCE=i in the environment) each instance uses a
 * file of its own.
 *
 * System calls: open, stat, pread64, close, write, unlink,
 * clock_gettime, write, exit_group.
 */
#include "bench.h"
#include <fcntl.h>
#include <sys/stat.h>

const char bench_name[] = "files";

#define FILE_BYTES 4096

static char path[64];
static char buf[FILE_BYTES];

/* One operation; 0 or -errno. */
static long one_use(void)
{
	struct stat st;
	if (syscall(SYS_stat, path, &st) < 0)
		return -errno;
	long fd = syscall(SYS_open, path, O_RDONLY, 0);
	if (fd < 0)
		return -errno;
	long r = syscall(SYS_pread64, fd, buf, sizeof buf, 0);
	long err = r == (long)sizeof buf ? 0 : r < 0 ? -errno : -EIO;
	syscall(SYS_close, fd);
	return err;
}

long long measure(long n)
{
	long long start = bench_now_ns();

	for (long i = 0; i < n; i++) {
		long err = one_use();
		if (err)
			return err;
	}
	return bench_now_ns() - start;
}

int main(int argc, char **argv)
{
	const char *instance = getenv("BENCH_INSTANCE");

	snprintf(path, sizeof path, "/tmp/files.%s", instance ? instance : "0");
	memset(buf, 'f', sizeof buf);
	long fd = syscall(SYS_open, path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		bench_fail("open", errno);
	if (syscall(SYS_write, fd, buf, sizeof buf) != (long)sizeof buf)
		bench_fail("write", errno);
	syscall(SYS_close, fd);
	int status = bench_main(argc, argv);
	syscall(SYS_unlink, path);
	return status;
}
