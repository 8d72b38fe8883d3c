/*
 * t_vmstat: /proc/vmstat's numa_local and numa_other, the counts of
 * where user pages were placed (Tempest: by alloc=, kern/vm/page.c).
 *
 * The file reads as "name value" lines; faulting in fresh anonymous pages
 * makes numa_local + numa_other grow by at least their number; another
 * user cannot open the file for writing.  On Linux the two lines exist only in a kernel built
 * with NUMA: without them the growth check is skipped with a note (on
 * Tempest, which has /proc/options, they must be there).
 */
#include "ut.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 256

/* numa_local and numa_other, or -1 each when missing; 0 if the file
 * cannot be read at all. */
static int read_counts(long *local, long *other)
{
	char buf[16384];
	int fd = open("/proc/vmstat", O_RDONLY);

	*local = *other = -1;
	if (fd < 0)
		return 0;
	ssize_t n = 0, r;
	while (n < (ssize_t)sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	int lines_ok = 1;
	for (char *line = buf; *line; ) {
		char *nl = strchr(line, '\n');
		char *sp = strchr(line, ' ');
		if (!nl || !sp || sp > nl)
			lines_ok = 0;
		if (strncmp(line, "numa_local ", 11) == 0)
			*local = strtol(line + 11, NULL, 10);
		else if (strncmp(line, "numa_other ", 11) == 0)
			*other = strtol(line + 11, NULL, 10);
		if (!nl)
			break;
		line = nl + 1;
	}
	CHECK(lines_ok);
	return 1;
}

/* As another user: the file is 0444. */
static void no_write(void *unused)
{
	CHECK_ERR(open("/proc/vmstat", O_WRONLY), EACCES);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	int tempest = access("/proc/options", F_OK) == 0;
	long local0, other0, local1, other1;

	CHECK(read_counts(&local0, &other0));
	if (local0 < 0 || other0 < 0) {
		CHECK(!tempest);
		ut_note("/proc/vmstat has no numa_local/numa_other here: growth not checked");
	} else {
		char *p = mmap(NULL, PAGES * 4096L, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(p != MAP_FAILED);
		for (long i = 0; p != MAP_FAILED && i < PAGES; i++)
			p[i * 4096] = 1;
		CHECK(read_counts(&local1, &other1));
		CHECK(local1 >= local0 && other1 >= other0);
		CHECK((local1 + other1) - (local0 + other0) >= PAGES);
		if (p != MAP_FAILED)
			munmap(p, PAGES * 4096L);
	}
	ut_unprivileged("vmstat_readonly", no_write, NULL);
	return ut_done();
}
