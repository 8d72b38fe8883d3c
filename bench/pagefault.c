/*
 * pagefault -- the anonymous write page fault: map a private anonymous
 * region, write one byte to each page (each write faults in a zeroed
 * page), unmap it.  Each operation is one page; only the writes are
 * timed, not mmap or munmap.  Regions are at most REGION_PAGES pages
 * (16 MiB), so a large count maps several in turn; the machine needs that
 * much free memory.
 *
 * On Linux, transparent huge pages would fill a whole 2 MiB with one
 * fault; the Linux peer's init turns them off (tools/linux_peer.py).
 *
 * System calls: mmap, munmap, clock_gettime, write, exit_group.
 */
#include "bench.h"
#include <sys/mman.h>

const char bench_name[] = "pagefault";

#define PAGE 4096L
#define REGION_PAGES 4096L

/* Maps pages pages, touches each, unmaps; returns the ns of the touching. */
static long long touch_region(long pages)
{
	long len = pages * PAGE;
	char *p = (char *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	long long start = bench_now_ns();
	for (long i = 0; i < pages; i++)
		((volatile char *)p)[i * PAGE] = 1;
	long long ns = bench_now_ns() - start;
	if (syscall(SYS_munmap, p, len) < 0)
		return -errno;
	return ns;
}

long long measure(long n)
{
	long long total = 0;

	while (n > 0) {
		long pages = n < REGION_PAGES ? n : REGION_PAGES;
		long long ns = touch_region(pages);
		if (ns < 0)
			return ns;
		total += ns;
		n -= pages;
	}
	return total;
}

BENCH_MAIN
