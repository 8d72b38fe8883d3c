/*
 * t_shm: System V shared memory.
 *
 * shmget (IPC_PRIVATE, IPC_CREAT, IPC_EXCL, missing keys, bad sizes, a
 * larger size for an existing key), shmat (a free address, a chosen one,
 * SHM_RND, an unaligned address, an occupied one, SHM_RDONLY whose store
 * dies by SIGSEGV, a bad id), shmdt (not an attachment), shmctl
 * (IPC_STAT's fields, IPC_SET, IPC_RMID while attached: the memory
 * stays and the id works until the last detach, IPC_INFO, bad pointers),
 * one copy of the pages shared with a forked child, attachments counted
 * through fork, exec and exit, and another user refused a 0600 segment.
 * Every segment is removed at the end, passed or not.
 */
#include "ut.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __GLIBC__
#define __ipc_perm_key __key     /* glibc's name for musl's __ipc_perm_key */
#endif

#define PAGE 4096

static int made[16], nmade;

/* A segment this test removes at the end. */
static int track(int id)
{
	if (id >= 0 && nmade < 16)
		made[nmade++] = id;
	return id;
}

static key_t key_for(int n)
{
	return (key_t)(0x5e000000 | ((getpid() & 0xffff) << 4) | n);
}

static unsigned long nattch(int id)
{
	struct shmid_ds ds;
	return shmctl(id, IPC_STAT, &ds) == 0 ? ds.shm_nattch : (unsigned long)-1;
}

static int child_status(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static void test_get(void)
{
	CHECK_ERR(shmget(IPC_PRIVATE, 0, 0600), EINVAL);
	CHECK_ERR(shmget(IPC_PRIVATE, (size_t)-1, 0600), EINVAL);
	CHECK_ERR(shmget(key_for(1), PAGE, 0600), ENOENT);
	int id = track(CHECK_OK(shmget(key_for(1), PAGE, IPC_CREAT | 0600)));
	CHECK_EQ(shmget(key_for(1), PAGE, IPC_CREAT | 0600), id);
	CHECK_EQ(shmget(key_for(1), 100, 0), id);
	CHECK_ERR(shmget(key_for(1), PAGE, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_ERR(shmget(key_for(1), 2 * PAGE, 0600), EINVAL);
	int other = track(CHECK_OK(shmget(IPC_PRIVATE, PAGE, 0600)));
	CHECK(other != id);
	struct shminfo info;
	CHECK(shmctl(0, IPC_INFO, (struct shmid_ds *)&info) >= 0);
	CHECK(info.shmmax >= PAGE);
	CHECK(info.shmmni > 0);
}

static void test_attach(void)
{
	int id = track(CHECK_OK(shmget(IPC_PRIVATE, 3 * PAGE + 1, 0600)));
	char *p = shmat(id, NULL, 0);
	CHECK(p != (char *)-1);
	if (p == (char *)-1)
		return;
	CHECK_EQ((uintptr_t)p % PAGE, 0);
	CHECK_EQ(p[0] + p[3 * PAGE], 0);	/* zero-filled, the partial page too */
	strcpy(p, "shared");
	/* A second attachment sees the same pages. */
	char *q = shmat(id, NULL, SHM_RDONLY);
	CHECK(q != (char *)-1 && q != p);
	if (q != (char *)-1) {
		CHECK(strcmp(q, "shared") == 0);
		CHECK_EQ(nattch(id), 2);
		CHECK_OK(shmdt(q));
	}
	CHECK_EQ(nattch(id), 1);
	CHECK_ERR(shmdt(p + 1), EINVAL);
	CHECK_ERR(shmdt(p + PAGE), EINVAL);
	CHECK_OK(shmdt(p));
	CHECK_ERR(shmdt(p), EINVAL);
	CHECK_EQ(nattch(id), 0);

	/* A chosen address: exactly there, SHM_RND rounds, unaligned fails,
	 * an occupied range fails without SHM_REMAP. */
	char *hole = mmap(NULL, 8 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(hole != MAP_FAILED);
	if (hole == MAP_FAILED)
		return;
	CHECK_ERR(shmat(id, hole + 1, 0), EINVAL);
	CHECK_ERR(shmat(id, hole, 0), EINVAL);	/* the mapping is there */
	munmap(hole, 8 * PAGE);
	char *at = shmat(id, hole + 100, SHM_RND);
	CHECK(at == hole);
	if (at == hole) {
		CHECK(strcmp(at, "shared") == 0);
		CHECK_OK(shmdt(at));
	}
	CHECK_ERR(shmat(-1, NULL, 0), EINVAL);
	CHECK_ERR(shmat(id + 0x8000 * 37, NULL, 0), EINVAL);
}

static void test_rdonly_faults(void)
{
	int id = track(CHECK_OK(shmget(IPC_PRIVATE, PAGE, 0600)));
	pid_t pid = fork();
	if (pid == 0) {
		volatile char *p = shmat(id, NULL, SHM_RDONLY);
		if (p == (char *)-1)
			_exit(2);
		p[0] = 1;
		_exit(0);
	}
	int st = child_status(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
}

static void test_stat_set(void)
{
	int id = track(CHECK_OK(shmget(key_for(2), 5000, IPC_CREAT | 0640)));
	struct shmid_ds ds;
	CHECK_OK(shmctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.shm_segsz, 5000);
	CHECK_EQ(ds.shm_perm.__ipc_perm_key, key_for(2));
	CHECK_EQ(ds.shm_perm.mode & 0777, 0640);
	CHECK_EQ(ds.shm_perm.uid, geteuid());
	CHECK_EQ(ds.shm_perm.cuid, geteuid());
	CHECK_EQ(ds.shm_perm.gid, getegid());
	CHECK_EQ(ds.shm_cpid, getpid());
	CHECK_EQ(ds.shm_lpid, 0);
	CHECK_EQ(ds.shm_atime, 0);
	CHECK(ds.shm_ctime > 0);
	void *p = shmat(id, NULL, 0);
	CHECK_OK(shmctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.shm_lpid, getpid());
	CHECK(ds.shm_atime > 0);
	if (p != (void *)-1)
		shmdt(p);
	ds.shm_perm.mode = 0604;
	CHECK_OK(shmctl(id, IPC_SET, &ds));
	CHECK_OK(shmctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.shm_perm.mode & 0777, 0604);
	CHECK_ERR(shmctl(id, IPC_STAT, UT_BADPTR), EFAULT);
	CHECK_ERR(shmctl(id, IPC_SET, UT_BADPTR), EFAULT);
	CHECK_ERR(shmctl(id, 12345, &ds), EINVAL);
}

static void test_remove_attached(void)
{
	int id = track(CHECK_OK(shmget(key_for(3), PAGE, IPC_CREAT | 0600)));
	int *p = shmat(id, NULL, 0);
	CHECK(p != (int *)-1);
	if (p == (int *)-1)
		return;
	CHECK_OK(shmctl(id, IPC_RMID, NULL));
	/* Still attached: the memory works and the id still answers, under
	 * the private key and marked for destruction; the key is free. */
	p[10] = 42;
	CHECK_EQ(p[10], 42);
	struct shmid_ds ds;
	CHECK_OK(shmctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.shm_nattch, 1);
	CHECK_EQ(ds.shm_perm.__ipc_perm_key, IPC_PRIVATE);
	CHECK(ds.shm_perm.mode & 01000);	/* SHM_DEST */
	CHECK_ERR(shmget(key_for(3), PAGE, 0600), ENOENT);
	CHECK_OK(shmdt(p));
	CHECK_ERR(shmctl(id, IPC_STAT, &ds), EINVAL);
	CHECK_ERR(shmat(id, NULL, 0), EINVAL);
}

/* The exec'd image: report how many attachments the segment has. */
static int exec_report(const char *idstr)
{
	unsigned long n = nattch(atoi(idstr));
	return n > 100 ? 100 : (int)n;
}

static void test_fork_exec_exit(void)
{
	int id = track(CHECK_OK(shmget(IPC_PRIVATE, PAGE, 0600)));
	volatile int *p = shmat(id, NULL, 0);
	CHECK(p != (int *)-1);
	if (p == (int *)-1)
		return;
	int up[2], down[2];		/* child to parent, parent to child */
	CHECK_OK(pipe(up));
	CHECK_OK(pipe(down));
	pid_t pid = fork();
	if (pid == 0) {
		p[0] = 1234;		/* one copy: the parent sees it */
		char c = 'x';
		write(up[1], &c, 1);
		read(down[0], &c, 1);	/* wait until the parent has counted */
		_exit(0);
	}
	char c;
	CHECK_EQ(read(up[0], &c, 1), 1);
	CHECK_EQ(p[0], 1234);
	CHECK_EQ(nattch(id), 2);	/* inherited by fork */
	CHECK_EQ(write(down[1], &c, 1), 1);
	CHECK_EQ(child_status(pid), 0);
	CHECK_EQ(nattch(id), 1);	/* dropped at exit */
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);

	char idstr[16];
	snprintf(idstr, sizeof idstr, "%d", id);
	pid = fork();
	if (pid == 0) {
		execl(ut_self, ut_self, "--nattch", idstr, (char *)NULL);
		_exit(99);
	}
	int st = child_status(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 1);	/* exec dropped the child's copy */
	shmdt((void *)p);
}

static int shared_id;
static key_t shared_key;

static void as_nobody(void *arg)
{
	CHECK_ERR(shmat(shared_id, NULL, 0), EACCES);
	CHECK_ERR(shmat(shared_id, NULL, SHM_RDONLY), EACCES);
	struct shmid_ds ds;
	CHECK_ERR(shmctl(shared_id, IPC_STAT, &ds), EACCES);
	CHECK_ERR(shmctl(shared_id, IPC_RMID, NULL), EPERM);
	memset(&ds, 0, sizeof ds);
	ds.shm_perm.mode = 0666;
	CHECK_ERR(shmctl(shared_id, IPC_SET, &ds), EPERM);
	CHECK_ERR(shmget(shared_key, PAGE, 0600), EACCES);
	CHECK_ERR(shmget(shared_key, PAGE, IPC_CREAT | 0600), EACCES);
	CHECK_EQ(shmget(shared_key, PAGE, 0), shared_id);	/* no access asked */
}

static void test_other_user(void)
{
	shared_key = key_for(4);
	shared_id = track(CHECK_OK(shmget(shared_key, PAGE, IPC_CREAT | 0600)));
	ut_unprivileged("another user's 0600 segment", as_nobody, NULL);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--nattch") == 0)
		return exec_report(argv[2]);
	ut_init(argc, argv);
	test_get();
	test_attach();
	test_rdonly_faults();
	test_stat_set();
	test_remove_attached();
	test_fork_exec_exit();
	test_other_user();
	for (int i = 0; i < nmade; i++)
		shmctl(made[i], IPC_RMID, NULL);
	return ut_done();
}
