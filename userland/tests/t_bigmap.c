/*
 * t_bigmap [MIB]: a file of MIB MiB (default 4) written with write(2),
 * mapped MAP_SHARED and read through the mapping twice, page checksums
 * compared with the pattern, a store in every 64th page on the first pass
 * and checked on the second; then msync, munmap, and read(2) sees the
 * stores.  make check runs the small default.  With a file larger than
 * the machine's memory it passes only if mapped file pages are unmapped
 * and freed under pressure (kern/vm/pcache_reclaim.c) and come back
 * intact: by hand, make run MACHINE='cpus=1,mem=64' SIZE=100M
 * OPTS='syncwrites=off' ADD=DIR RUN='cd /tmp && /add/t_bigmap 80' with
 * the program in DIR.
 */
#include "ut.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096
#define CHUNK (64 * 1024)
#define MARK_EVERY 64

static uint32_t word_at(uint64_t off)
{
	return (uint32_t)(off * 2654435761u) ^ (uint32_t)(off >> 12);
}

/* The pattern of the page at off, with the marker when marked. */
static void expected(uint32_t *w, uint64_t off, int marked)
{
	for (size_t i = 0; i < PG / 4; i++)
		w[i] = word_at(off + i * 4);
	if (marked)
		w[0] = (uint32_t)(off / PG) | 0x80000000u;
}

static int write_file(int fd, uint64_t size)
{
	static uint32_t buf[CHUNK / 4];
	for (uint64_t off = 0; off < size; off += CHUNK) {
		for (size_t i = 0; i < CHUNK / 4; i++)
			buf[i] = word_at(off + i * 4);
		if (pwrite(fd, buf, CHUNK, (off_t)off) != CHUNK)
			return -1;
	}
	return 0;
}

/* One pass over the mapping: how many pages differ from the pattern. */
static uint64_t map_pass(volatile uint32_t *m, uint64_t size, int store)
{
	static uint32_t want[PG / 4];
	uint64_t bad = 0;
	for (uint64_t off = 0; off < size; off += PG) {
		int marked = (off / PG) % MARK_EVERY == 0;
		if (store && marked)
			m[off / 4] = (uint32_t)(off / PG) | 0x80000000u;
		expected(want, off, marked);
		volatile uint32_t *p = m + off / 4;
		for (size_t i = 0; i < PG / 4; i++) {
			if (p[i] != want[i]) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

/* read(2) of every marked page: how many lack the store. */
static uint64_t read_marks(int fd, uint64_t size)
{
	uint64_t bad = 0;
	for (uint64_t off = 0; off < size; off += MARK_EVERY * PG) {
		uint32_t w = 0;
		if (pread(fd, &w, 4, (off_t)off) != 4 || w != ((uint32_t)(off / PG) | 0x80000000u))
			bad++;
	}
	return bad;
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 4;
	if (mib == 0 || mib > 4096) {
		ut_note("usage: t_bigmap [MIB], 1 to 4096");
		return 2;
	}
	ut_alarm((unsigned)(120 + mib * 20));
	uint64_t size = mib << 20;
	int fd = CHECK_OK(open("bigmap", O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_OK(write_file(fd, size));
	ut_say("t_bigmap: %llu MiB written", (unsigned long long)mib);
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return ut_done();
	CHECK_EQ(map_pass(m, size, 1), 0);
	ut_say("t_bigmap: first pass through the mapping done");
	CHECK_EQ(map_pass(m, size, 0), 0);
	CHECK_OK(msync(m, size, MS_SYNC));
	CHECK_OK(munmap(m, size));
	CHECK_EQ(read_marks(fd, size), 0);
	close(fd);
	CHECK_OK(unlink("bigmap"));
	ut_say("t_bigmap: %llu MiB mapped and read back twice", (unsigned long long)mib);
	return ut_done();
}
