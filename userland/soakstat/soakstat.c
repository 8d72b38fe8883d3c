/*
 * soakstat: one line with the live kernel-object counts and the memory
 * available, for the soak (tools/soak.py) to compare before and after:
 *
 *   soak: objects file=N fdtable=N pipe=N as=N amap=N shm=N sem=N msg=N memavail_kb=N
 *
 * The counts are the live instances of the lock classes that have one
 * lock per kernel object (Tempest's lock statistics, as ut_fuzz's leak
 * check reads them); memavail_kb is /proc/meminfo's MemAvailable.
 * Exit status 2 on a kernel without the statistics.
 */
#include "../../kern/abi/tempest_abi.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const classes[] = { "file", "fdtable", "pipe", "as", "amap",
				       "shm", "sem", "msg" };
#define NCLASSES ((int)(sizeof classes / sizeof classes[0]))

static int counts(long out[NCLASSES])
{
	size_t need = 0;
	for (int tries = 0; tries < 8; tries++) {
		long r = syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, NULL, 0, &need);
		if (r < 0 && errno != ENOSPC)
			return -1;
		need += 4096;
		char *snap = malloc(need);
		if (!snap)
			return -1;
		if (syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, snap, need, &need) < 0) {
			free(snap);
			continue;
		}
		struct lockstat_snapshot_hdr *h = (void *)snap;
		struct lockstat_class_rec *c = (void *)(h + 1);
		for (int k = 0; k < NCLASSES; k++) {
			out[k] = 0;
			for (uint32_t i = 0; i < h->nclasses; i++)
				if (!strcmp(c[i].name, classes[k]))
					out[k] = (long)c[i].ninstances;
		}
		free(snap);
		return 0;
	}
	return -1;
}

static long memavail_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	long n[NCLASSES];
	if (argc > 1) {
		fprintf(stderr, "usage: soakstat\n");
		return 2;
	}
	if (counts(n) != 0) {
		fprintf(stderr, "soakstat: no kernel lock statistics here\n");
		return 2;
	}
	printf("soak: objects");
	for (int k = 0; k < NCLASSES; k++)
		printf(" %s=%ld", classes[k], n[k]);
	printf(" memavail_kb=%ld\n", memavail_kb());
	return 0;
}
