/*
 * memhog.h: taking the machine's free memory, for the programs that judge
 * what the kernel does when it runs out (echod's hog, oomcopy).  Header
 * only: each program that includes it gets its own static copies.
 */
#ifndef MEMHOG_H
#define MEMHOG_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MEMHOG_CHUNK (1 << 20)          /* the most one mapping takes */

/* A field of /proc/meminfo ("MemFree:", say) in kB, -1 when unreadable. */
static long meminfo_kb(const char *field)
{
	char buf[2048];
	int f = open("/proc/meminfo", O_RDONLY);
	ssize_t n = f < 0 ? -1 : read(f, buf, sizeof buf - 1);
	if (f >= 0)
		close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *at = strstr(buf, field);
	return at ? strtol(at + strlen(field), NULL, 10) : -1;
}

/* Take anonymous memory (every page touched) while more than leave_kb is
 * free, a megabyte at a time and less near the end, so that no touch
 * finds memory gone: the kilobytes taken, or -1 when nothing could be. */
static long memhog_take(long leave_kb)
{
	long kb = 0;
	for (long free_kb = meminfo_kb("MemFree:"); free_kb > leave_kb + 4;
	     free_kb = meminfo_kb("MemFree:")) {
		size_t len = (size_t)(free_kb - leave_kb) * 1024;
		len = len > MEMHOG_CHUNK ? MEMHOG_CHUNK : len & ~(size_t)4095;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return kb ? kb : -1;
		for (size_t i = 0; i < len; i += 4096)
			m[i] = 1;
		kb += (long)(len / 1024);
	}
	return kb;
}

#endif
