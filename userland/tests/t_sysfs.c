/*
 * t_sysfs: the part of /sys/devices/system that numactl, libnuma and
 * lscpu read, checked for agreement with itself and with the calls.
 *
 * node/online lists nodes and node/ has exactly those nodeN
 * directories; each node's distance line has one number a node, 10 to
 * itself and more to the others, the same both ways; the nodes' cpulists
 * together are cpu/online, each CPU on one node, and each cpumap is its
 * cpulist as a mask; cpu/ has a cpuN directory for each online CPU;
 * meminfo's MemTotal is at least its MemFree; node/has_memory is the
 * nodes get_mempolicy allows memory from.
 */
#include "ut.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYS "/sys/devices/system/"

static int read_text(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t got = fread(buf, 1, n - 1, f);
	buf[got] = 0;
	fclose(f);
	return (int)got;
}

/* A list ("0-3,5\n") as a mask. */
static uint64_t list_mask(const char *path)
{
	char buf[256];
	uint64_t mask = 0;
	CHECK(read_text(path, buf, sizeof buf) > 0);
	for (char *p = buf; *p >= '0' && *p <= '9';) {
		long a = strtol(p, &p, 10), b = a;
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (long i = a; i <= b && i < 64; i++)
			mask |= 1ULL << i;
		if (*p == ',')
			p++;
	}
	return mask;
}

/* The numbers N of the entries named prefixN in dir. */
static uint64_t numbered(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	uint64_t mask = 0;
	size_t n = strlen(prefix);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, prefix, n) != 0 || e->d_name[n] < '0' || e->d_name[n] > '9')
			continue;
		long v = strtol(e->d_name + n, &end, 10);
		if (*end == 0 && v < 64)
			mask |= 1ULL << v;
	}
	if (d)
		closedir(d);
	return mask;
}

static void check_node(int node, uint64_t nodes, uint64_t *cpus_seen)
{
	char path[128], buf[1024];
	snprintf(path, sizeof path, SYS "node/node%d/distance", node);
	CHECK(read_text(path, buf, sizeof buf) > 0);
	char *p = buf;
	for (int other = 0; other < 64; other++) {
		if (!(nodes & (1ULL << other)))
			continue;
		long d = strtol(p, &p, 10);
		CHECK(other == node ? d == 10 : d > 10);
		char back[128], bbuf[1024];
		snprintf(back, sizeof back, SYS "node/node%d/distance", other);
		CHECK(read_text(back, bbuf, sizeof bbuf) > 0);
		char *q = bbuf;
		long dback = 0;
		for (int k = 0; k <= node; k++)
			if (nodes & (1ULL << k))
				dback = strtol(q, &q, 10);
		CHECK_EQ(dback, d);
	}
	snprintf(path, sizeof path, SYS "node/node%d/cpulist", node);
	uint64_t cpus = list_mask(path);
	CHECK_EQ(cpus & *cpus_seen, 0);                 /* a CPU on one node */
	*cpus_seen |= cpus;
	snprintf(path, sizeof path, SYS "node/node%d/cpumap", node);
	CHECK(read_text(path, buf, sizeof buf) > 0);
	char hex[64] = { 0 };
	size_t h = 0;
	for (char *c = buf; *c && *c != '\n' && h < sizeof hex - 1; c++)
		if (*c != ',')
			hex[h++] = *c;
	size_t skip = h > 16 ? h - 16 : 0;             /* the low 64 bits */
	CHECK_EQ(strtoull(hex + skip, NULL, 16), cpus);
	snprintf(path, sizeof path, SYS "node/node%d/meminfo", node);
	CHECK(read_text(path, buf, sizeof buf) > 0);
	char want[64];
	unsigned long total = 0, free = 0;
	snprintf(want, sizeof want, "Node %d MemTotal:", node);
	char *t = strstr(buf, want);
	CHECK(t != NULL);
	if (t)
		total = strtoul(t + strlen(want), NULL, 10);
	snprintf(want, sizeof want, "Node %d MemFree:", node);
	char *f = strstr(buf, want);
	CHECK(f != NULL);
	if (f)
		free = strtoul(f + strlen(want), NULL, 10);
	CHECK(total >= free);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	uint64_t nodes = list_mask(SYS "node/online");
	CHECK(nodes != 0);
	CHECK_EQ(numbered(SYS "node", "node"), nodes);
	uint64_t cpus_seen = 0;
	for (int n = 0; n < 64; n++)
		if (nodes & (1ULL << n))
			check_node(n, nodes, &cpus_seen);
	uint64_t online = list_mask(SYS "cpu/online");
	CHECK_EQ(cpus_seen, online);
	CHECK_EQ(numbered(SYS "cpu", "cpu") & online, online);
	CHECK_EQ(list_mask(SYS "cpu/possible") & online, online);
	uint64_t allowed[16] = { 0 };
	int mode;
	CHECK_OK(syscall(SYS_get_mempolicy, &mode, allowed, 1024, NULL, 4));
	CHECK_EQ(list_mask(SYS "node/has_memory"), allowed[0]);
	return ut_done();
}
