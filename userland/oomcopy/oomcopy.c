/*
 * oomcopy: the judge of a copy to user memory that finds no page (make
 * check's oom/copy, tests/rel_check.py).
 *
 * A child, the hog, takes the machine's free memory until less than
 * LEAVE_KB is left, and keeps taking what the kernel frees.  The parent
 * then reads a quarter of the machine's memory from /dev/zero into a
 * mapping it has never touched, so that only the kernel's copy out to it
 * faults pages in.  When memory runs out inside that copy, the kernel must
 * kill the largest process (the hog) and finish the read, as Linux's OOM
 * killer does; Tempest used to kill the reader.
 *
 * Checks: every byte is read, and reads as zero; the hog is dead of
 * SIGKILL by then; the reader lives to say so.  The last line is "N passed, N failed"; a
 * reader killed prints no such line.
 *
 *   usage: oomcopy
 *
 * It refuses a machine with more than MAX_TOTAL_KB of memory (a host, not
 * a guest): taking all of that would hurt whoever else runs there.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/memhog.h"

#define LEAVE_KB 1024                   /* what the hog leaves free */
#define MAX_TOTAL_KB (2L << 20)         /* 2 GiB: larger is not an emulated machine */

static int passed, failed;

static void check(int ok, const char *what)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL oomcopy: %s\n", what);
	}
	fflush(stdout);
}

/* The hog: take the memory, say so on fd, then keep it and take more. */
static void hog(int fd)
{
	long kb = memhog_take(LEAVE_KB);
	char c = kb > 0 ? 'y' : 'n';
	if (write(fd, &c, 1) != 1)
		_exit(1);
	for (;;) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		memhog_take(LEAVE_KB);
	}
}

/* Read len bytes of /dev/zero into buf: the bytes read, -1 on an error. */
static long read_zeros(char *buf, size_t len)
{
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < len) {
		ssize_t n = read(fd, buf + done, len - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	return (long)done;
}

/* Every page's first byte, and the last byte, read as zero. */
static int all_zero(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		if (buf[i])
			return 0;
	return buf[len - 1] == 0;
}

int main(int argc, char **argv)
{
	long total_kb = meminfo_kb("MemTotal:");
	if (argc != 1 || total_kb <= 0 || total_kb > MAX_TOTAL_KB) {
		fprintf(stderr, argc != 1 ? "usage: oomcopy\n"
			: "oomcopy: %ld kB of memory is not a test machine's (at most %ld)\n",
			total_kb, MAX_TOTAL_KB);
		return 2;
	}
	int ready[2];
	if (pipe(ready) < 0) {
		perror("oomcopy: pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		hog(ready[1]);
	}
	close(ready[1]);
	printf("oomcopy: reader pid %d, hog pid %d\n", (int)getpid(), (int)pid);
	fflush(stdout);
	char took = 0;
	check(pid > 0 && read(ready[0], &took, 1) == 1 && took == 'y',
	      "the hog did not take the free memory");
	size_t len = (size_t)total_kb * 1024 / 4;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(buf != MAP_FAILED, "no mapping for a quarter of memory");
	if (buf != MAP_FAILED) {
		long got = read_zeros(buf, len);
		printf("oomcopy: %ld kB total, %ld kB read into untouched memory\n", total_kb,
		       got / 1024);
		check(got == (long)len, "the read into untouched memory stopped short");
		check(got > 0 && all_zero(buf, (size_t)got), "what was read is not zeros");
	}
	/* The OOM killer waits for its victim to be gone before the fault is
	 * tried again: by now the hog is a zombie. */
	int status = 0;
	pid_t gone = pid > 0 ? waitpid(pid, &status, WNOHANG) : -1;
	check(gone == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "the hog was not killed for the memory the read needed");
	if (pid > 0 && gone != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
