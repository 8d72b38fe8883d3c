/*
 * t_clusterstat: Hurricane clustering's counts from user space
 * (TEMPEST_SYS_CLUSTER_STATS, /proc/clusters, lockstat -C).  Any kernel
 * answers: without cluster= the call reports no clusters and /proc/clusters
 * is its header alone; with it each cluster's record names itself and has
 * at least one CPU, a bad buffer is EFAULT, and a short one gets only what
 * fits while the count says how many there are.
 *
 * On Linux the call does not exist: the test checks ENOSYS and stops.
 */
#include "ut.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../kern/abi/tempest_abi.h"

#define MAXC 64

static void check_records(void)
{
	static struct tempest_cluster_stat st[MAXC];
	long n = syscall(TEMPEST_SYS_CLUSTER_STATS, st, (long)MAXC);
	CHECK(n >= 0 && n <= MAXC);
	for (long i = 0; i < n && i < MAXC; i++) {
		CHECK_EQ(st[i].cluster, (uint32_t)i);
		CHECK(st[i].ncpus >= 1);
	}
	if (n > 0) {
		CHECK_ERR(syscall(TEMPEST_SYS_CLUSTER_STATS, UT_BADPTR, (long)MAXC), EFAULT);
		/* Room for one record: one is copied, the count is all of them. */
		static struct tempest_cluster_stat one[2];
		memset(one, 0xab, sizeof one);
		CHECK_EQ(syscall(TEMPEST_SYS_CLUSTER_STATS, one, 1L), n);
		CHECK_EQ(one[0].cluster, 0u);
		CHECK_EQ(one[1].cluster, 0xababababu);
	}
	/* Asking for none copies nothing, whatever the pointer. */
	CHECK_EQ(syscall(TEMPEST_SYS_CLUSTER_STATS, UT_BADPTR, 0L), n);
	ut_note("%ld cluster%s", n, n == 1 ? "" : "s");

	FILE *f = fopen("/proc/clusters", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char line[256];
	int lines = 0;
	CHECK(fgets(line, sizeof line, f) != NULL && strncmp(line, "cluster cpus ", 13) == 0);
	while (fgets(line, sizeof line, f))
		lines++;
	fclose(f);
	CHECK_EQ(lines, n);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	struct tempest_cluster_stat st;
	if (syscall(TEMPEST_SYS_CLUSTER_STATS, &st, 1L) < 0 && errno == ENOSYS) {
		CHECK_ERR(syscall(TEMPEST_SYS_CLUSTER_STATS, NULL, 0L), ENOSYS);
		ut_note("not Tempest: the cluster statistics call is ENOSYS, as on any Linux");
		return ut_done();
	}
	check_records();
	return ut_done();
}
