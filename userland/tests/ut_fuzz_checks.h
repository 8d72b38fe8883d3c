/*
 * ut_fuzz_checks.h: the parent's checks after the fuzzing (ut_fuzz.c
 * includes this once; a part of that program): no kernel object leaked,
 * the kernel still serves files, pipes, fork and exit status, and a
 * process still runs on every CPU.
 */
#ifndef UT_FUZZ_CHECKS_H
#define UT_FUZZ_CHECKS_H

/*
 * Tempest's lock statistics count the live instances of each lock class,
 * and some classes have one lock per kernel object: open files, descriptor
 * tables (processes), pipes, address spaces, anonymous maps.  Their counts
 * once the children are reaped must be what they were before: a leak of
 * any of them shows.  On Linux (no such call) the check is skipped.
 */
static const char *const object_classes[] = { "file", "fdtable", "pipe", "as", "amap",
					      "shm", "sem", "msg" };
#define NOBJECTS ((int)(sizeof object_classes / sizeof object_classes[0]))

/* The live instance counts of object_classes[]; 0, or -1 without them. */
static int kernel_objects(long counts[NOBJECTS])
{
	size_t need = 0;
	for (int tries = 0; tries < 8; tries++) {
		long r = syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, NULL, 0, &need);
		if (r < 0 && errno != ENOSPC)
			return -1;
		need += 4096; /* room for locks made meanwhile */
		char *snap = malloc(need);
		if (!snap)
			return -1;
		r = syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, snap, need, &need);
		if (r < 0) {
			free(snap);
			continue;
		}
		struct lockstat_snapshot_hdr *h = (void *)snap;
		struct lockstat_class_rec *c = (void *)(h + 1);
		for (int k = 0; k < NOBJECTS; k++) {
			counts[k] = 0;
			for (uint32_t i = 0; i < h->nclasses; i++)
				if (!strcmp(c[i].name, object_classes[k]))
					counts[k] = (long)c[i].ninstances;
		}
		free(snap);
		return 0;
	}
	return -1;
}

static void check_no_leaks(const long before[NOBJECTS], int have)
{
	long after[NOBJECTS];
	if (!have || kernel_objects(after) != 0) {
		ut_note("no kernel object counts here (Tempest's lock statistics)");
		return;
	}
	for (int k = 0; k < NOBJECTS; k++)
		ut_check(after[k] == before[k], __FILE__, __LINE__,
			 "kernel objects of class %s: %ld after the fuzzing, %ld before",
			 object_classes[k], after[k], before[k]);
}

/* A child pinned to each CPU runs there and exits with the CPU's number. */
static void check_every_cpu(const int *cpus, int ncpu)
{
	for (int i = 0; i < ncpu; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(pin_to(cpus[i]) == 0 && pinned_at(cpus[i]) ?
				      cpus[i] % 200 : 255);
		CHECK(pid > 0);
		int st = ut_wait(pid);
		ut_check(WIFEXITED(st) && WEXITSTATUS(st) == cpus[i] % 200,
			 __FILE__, __LINE__, "a process runs on cpu %d (status 0x%x)",
			 cpus[i], st);
	}
}

/* Files, pipes, fork and exit status, as any program uses them. */
static void check_kernel_works(int nchild)
{
	for (int i = 0; i < nchild; i++) {
		char path[32], back[8] = { 0 };
		snprintf(path, sizeof path, "check/a%d", i);
		ut_check(ut_read_file(path, back, sizeof back) == 5 &&
				 !memcmp(back, "alive", 5),
			 __FILE__, __LINE__, "%s holds what child %d wrote", path, i);
	}
	CHECK_OK(ut_write_file("after", "parent ok", 9, 0644));
	CHECK_OK(rename("after", "after2"));
	char back[16] = { 0 };
	CHECK_EQ(ut_read_file("after2", back, sizeof back), 9);
	CHECK(!memcmp(back, "parent ok", 9));
	CHECK_OK(unlink("after2"));
	CHECK_ERR(unlink("after2"), ENOENT);

	int p[2];
	CHECK_OK(pipe(p));
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(write(p[1], "through", 7) == 7 ? 42 : 1);
	}
	CHECK(pid > 0);
	close(p[1]);
	char got[16] = { 0 };
	long r, total = 0;
	while ((r = read(p[0], got + total, sizeof got - 1 - total)) > 0)
		total += r;
	CHECK_EQ(r, 0); /* end of file once the writer is gone */
	CHECK_EQ(total, 7);
	CHECK(!memcmp(got, "through", 7));
	close(p[0]);
	int st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42);
	CHECK_ERR(waitpid(-1, &st, WNOHANG), ECHILD); /* nothing else */
}

#endif
