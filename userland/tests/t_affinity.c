/*
 * t_affinity: CPU affinity.  sched_getaffinity reports the CPUs a process
 * may run on (and musl's sysconf(_SC_NPROCESSORS_ONLN) counts them);
 * sched_setaffinity restricts it, and the process is on an allowed CPU
 * when the call returns (getcpu says which); a child inherits the mask
 * across fork and keeps it across exec.  Bad arguments: an empty mask
 * (or one of CPUs that do not exist) is EINVAL, a short or misaligned
 * length for sched_getaffinity is EINVAL, bad pointers are EFAULT, no
 * such process is ESRCH, and another user's process is EPERM.
 */
#include "ut.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static cpu_set_t all;  /* the CPUs we started with */
static int ncpu, first_cpu, last_cpu;

static int pin_to(pid_t pid, int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof set, &set);
}

static int only_cpu(pid_t pid)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(pid, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return -1;
}

static void test_get(void)
{
	CHECK(ncpu >= 1);
	CHECK_EQ(sysconf(_SC_NPROCESSORS_ONLN), ncpu);
	/* The raw call returns the bytes it wrote: whole longs. */
	unsigned long raw[16] = { 0 };
	long r = syscall(SYS_sched_getaffinity, 0, sizeof raw, raw);
	CHECK(r > 0 && r % sizeof(long) == 0 && r <= (long)sizeof raw);
	CHECK(raw[0] != 0);
	CHECK_EQ(syscall(SYS_sched_getaffinity, getpid(), sizeof raw, raw), r);
	/* A length that cannot hold the CPUs, or is not whole longs. */
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 0, raw), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 7, raw), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, sizeof raw, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, sizeof raw, UT_KERNPTR), EFAULT);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0x7ffffff0, sizeof raw, raw), ESRCH);
	CHECK_ERR(syscall(SYS_sched_getaffinity, -1, sizeof raw, raw), ESRCH);
	/* getcpu: one of ours; NULL pointers are allowed. */
	unsigned cpu = ~0u, node = ~0u;
	CHECK_OK(syscall(SYS_getcpu, &cpu, &node, NULL));
	CHECK(cpu < CPU_SETSIZE && CPU_ISSET(cpu, &all));
	CHECK(node != ~0u);
	CHECK_OK(syscall(SYS_getcpu, NULL, NULL, NULL));
	CHECK_ERR(syscall(SYS_getcpu, UT_BADPTR, NULL, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_getcpu, NULL, UT_KERNPTR, NULL), EFAULT);
}

static void test_set(void)
{
	/* On each CPU in turn: there when the call returns, and still. */
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		CHECK_OK(pin_to(0, c));
		ut_check(sched_getcpu() == c, __FILE__, __LINE__,
			 "pinned to cpu %d, running on %d", c, sched_getcpu());
		CHECK_EQ(only_cpu(0), c);
		sched_yield();
		CHECK_EQ(sched_getcpu(), c);
	}
	/* Bad masks change nothing. */
	CHECK_OK(pin_to(0, first_cpu));
	cpu_set_t none;
	CPU_ZERO(&none);
	CHECK_ERR(sched_setaffinity(0, sizeof none, &none), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setaffinity, 0, 0, &all), EINVAL);
	if (CPU_SETSIZE > 1000) {
		cpu_set_t absent;
		CPU_ZERO(&absent);
		CPU_SET(1000, &absent); /* no machine here has that many */
		CHECK_ERR(sched_setaffinity(0, sizeof absent, &absent), EINVAL);
	}
	CHECK_ERR(syscall(SYS_sched_setaffinity, 0, sizeof all, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_sched_setaffinity, 0, sizeof all, UT_KERNPTR), EFAULT);
	CHECK_ERR(sched_setaffinity(0x7ffffff0, sizeof all, &all), ESRCH);
	CHECK_ERR(sched_setaffinity(-1, sizeof all, &all), ESRCH);
	CHECK_EQ(only_cpu(0), first_cpu);
	/* A mask with bits beyond the CPUs keeps the ones that exist. */
	cpu_set_t more = all;
	CPU_SET(CPU_SETSIZE - 1, &more);
	CHECK_OK(sched_setaffinity(0, sizeof more, &more));
	cpu_set_t got;
	CPU_ZERO(&got);
	CHECK_OK(sched_getaffinity(0, sizeof got, &got));
	CHECK(CPU_EQUAL(&got, &all));
}

static void test_inherit(void)
{
	/* fork: the child starts with the parent's mask; exec keeps it. */
	CHECK_OK(pin_to(0, last_cpu));
	pid_t pid = fork();
	if (pid == 0)
		_exit(only_cpu(0) == last_cpu && sched_getcpu() == last_cpu ? 0 : 1);
	CHECK_EQ(ut_wait(pid), 0);
	pid = fork();
	if (pid == 0) {
		char want[16];
		snprintf(want, sizeof want, "%d", last_cpu);
		char *argv[] = { (char *)ut_self, "--as", "pinned", want, NULL };
		execve(ut_self, argv, environ);
		_exit(99);
	}
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_OK(sched_setaffinity(0, sizeof all, &all));
}

/* Another process's mask: read and set by its owner (or root). */
static void test_other(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		char c;
		(void)!read(p[0], &c, 1); /* until the parent is done */
		_exit(only_cpu(0) == first_cpu && sched_getcpu() == first_cpu ? 0 : 1);
	}
	close(p[0]);
	CHECK_OK(pin_to(pid, first_cpu));
	CHECK_EQ(only_cpu(pid), first_cpu);
	close(p[1]);
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_ERR(sched_getaffinity(pid, sizeof all, &all), ESRCH); /* reaped */
}

static void as_nobody(void *arg)
{
	pid_t other = *(pid_t *)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CHECK_OK(sched_getaffinity(other, sizeof set, &set)); /* anyone may look */
	CHECK_ERR(pin_to(other, first_cpu), EPERM);
	CHECK_OK(pin_to(0, last_cpu)); /* our own: fine */
	CHECK_EQ(sched_getcpu(), last_cpu);
}

static void test_permission(void)
{
	pid_t me = getpid();
	ut_unprivileged("setaffinity of root's process", as_nobody, &me);
}

int main(int argc, char **argv)
{
	if (argc > 3 && !strcmp(argv[1], "--as") && !strcmp(argv[2], "pinned")) {
		int want = atoi(argv[3]);
		return only_cpu(0) == want && sched_getcpu() == want ? 0 : 1;
	}
	ut_init(argc, argv);
	CPU_ZERO(&all);
	CHECK_OK(sched_getaffinity(0, sizeof all, &all));
	ncpu = CPU_COUNT(&all);
	first_cpu = last_cpu = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			if (first_cpu < 0)
				first_cpu = c;
			last_cpu = c;
		}
	test_get();
	if (first_cpu >= 0) {
		test_set();
		test_inherit();
		test_other();
		test_permission();
	}
	return ut_done();
}
