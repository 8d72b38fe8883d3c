/*
 * t_sem: System V semaphores.
 *
 * semget (bad counts, IPC_EXCL, missing keys, a larger count for an
 * existing key), semctl (SETVAL, GETVAL, SETALL, GETALL, GETPID, GETNCNT,
 * GETZCNT, IPC_STAT, IPC_SET, ranges), semop (all operations or none,
 * IPC_NOWAIT, ERANGE, EFBIG, E2BIG, nsops 0), semtimedop's timeout, a
 * wait ended by a signal (EINTR) and by removal (EIDRM), SEM_UNDO at exit,
 * a counter in shared memory incremented by one child per CPU under a
 * semaphore (exact total), and another user refused a 0600 set.
 */
#include "ut.h"

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INCREMENTS 2000

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static int made[16], nmade;

static int track(int id)
{
	if (id >= 0 && nmade < 16)
		made[nmade++] = id;
	return id;
}

static key_t key_for(int n)
{
	return (key_t)(0x5f000000 | ((getpid() & 0xffff) << 4) | n);
}

static int op(int id, int num, int delta, int flags)
{
	struct sembuf sb = { .sem_num = num, .sem_op = delta, .sem_flg = flags };
	return semop(id, &sb, 1);
}

static int child_status(pid_t pid)
{
	int st;
	return waitpid(pid, &st, 0) == pid ? st : -1;
}

/* Wait (yielding) until n processes wait on semaphore num to go up (or,
 * zero, for it to be zero); true if they did within the test's time. */
static int wait_for_waiters(int id, int num, int n, int zero)
{
	for (int i = 0; i < 200000; i++) {
		if (semctl(id, num, zero ? GETZCNT : GETNCNT) == n)
			return 1;
		sched_yield();
	}
	return 0;
}

static void test_get(void)
{
	CHECK_ERR(semget(IPC_PRIVATE, 0, 0600), EINVAL);
	CHECK_ERR(semget(IPC_PRIVATE, -1, 0600), EINVAL);
	CHECK_ERR(semget(IPC_PRIVATE, 1 << 20, 0600), EINVAL);
	CHECK_ERR(semget(key_for(1), 1, 0600), ENOENT);
	int id = track(CHECK_OK(semget(key_for(1), 2, IPC_CREAT | 0600)));
	CHECK_EQ(semget(key_for(1), 2, 0600), id);
	CHECK_EQ(semget(key_for(1), 0, 0), id);
	CHECK_ERR(semget(key_for(1), 3, 0600), EINVAL);
	CHECK_ERR(semget(key_for(1), 2, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	struct semid_ds ds;
	union semun arg = { .buf = &ds };
	CHECK_OK(semctl(id, 0, IPC_STAT, arg));
	CHECK_EQ(ds.sem_nsems, 2);
	CHECK_EQ(ds.sem_perm.mode & 0777, 0600);
	CHECK_EQ(ds.sem_perm.uid, geteuid());
	CHECK_EQ(ds.sem_otime, 0);
	ds.sem_perm.mode = 0640;
	CHECK_OK(semctl(id, 0, IPC_SET, arg));
	CHECK_OK(semctl(id, 0, IPC_STAT, arg));
	CHECK_EQ(ds.sem_perm.mode & 0777, 0640);
	arg.buf = UT_BADPTR;
	CHECK_ERR(semctl(id, 0, IPC_STAT, arg), EFAULT);
	CHECK_ERR(semctl(id, 0, 9999), EINVAL);
}

static void test_values(void)
{
	int id = track(CHECK_OK(semget(IPC_PRIVATE, 3, 0600)));
	union semun arg = { .val = 5 };
	CHECK_OK(semctl(id, 1, SETVAL, arg));
	CHECK_EQ(semctl(id, 1, GETVAL), 5);
	CHECK_EQ(semctl(id, 1, GETPID), getpid());
	CHECK_EQ(semctl(id, 0, GETVAL), 0);
	arg.val = 32768;
	CHECK_ERR(semctl(id, 1, SETVAL, arg), ERANGE);
	arg.val = -1;
	CHECK_ERR(semctl(id, 1, SETVAL, arg), ERANGE);
	CHECK_ERR(semctl(id, 3, GETVAL), EINVAL);
	CHECK_ERR(semctl(id, -1, GETVAL), EINVAL);
	unsigned short vals[3] = { 7, 8, 9 }, back[3] = { 0 };
	arg.array = vals;
	CHECK_OK(semctl(id, 0, SETALL, arg));
	arg.array = back;
	CHECK_OK(semctl(id, 0, GETALL, arg));
	CHECK(back[0] == 7 && back[1] == 8 && back[2] == 9);
	arg.array = UT_BADPTR;
	CHECK_ERR(semctl(id, 0, GETALL, arg), EFAULT);
	CHECK_ERR(semctl(id, 0, SETALL, arg), EFAULT);

	/* All or none: the third operation would block, so with IPC_NOWAIT
	 * the call fails and the first two are not applied. */
	struct sembuf sops[3] = { { 0, -1, 0 }, { 1, 2, 0 }, { 2, -10, IPC_NOWAIT } };
	CHECK_ERR(semop(id, sops, 3), EAGAIN);
	arg.array = back;
	CHECK_OK(semctl(id, 0, GETALL, arg));
	CHECK(back[0] == 7 && back[1] == 8 && back[2] == 9);
	sops[2].sem_op = -9;
	CHECK_OK(semop(id, sops, 3));
	CHECK_OK(semctl(id, 0, GETALL, arg));
	CHECK(back[0] == 6 && back[1] == 10 && back[2] == 0);
	CHECK_OK(op(id, 2, 0, 0));		/* wait for zero: it is zero */
	CHECK_ERR(op(id, 0, 0, IPC_NOWAIT), EAGAIN);
	CHECK_ERR(op(id, 0, 32767, 0), ERANGE);
	CHECK_ERR(op(id, 3, 1, 0), EFBIG);
	CHECK_ERR(semop(id, sops, 0), EINVAL);
	struct sembuf many[600];
	for (int i = 0; i < 600; i++)
		many[i] = (struct sembuf){ 0, 0, IPC_NOWAIT };
	CHECK_ERR(semop(id, many, 600), E2BIG);
	CHECK_ERR(semop(id, UT_BADPTR, 1), EFAULT);
	CHECK_ERR(semop(-1, sops, 1), EINVAL);
	struct semid_ds ds;
	arg.buf = &ds;
	CHECK_OK(semctl(id, 0, IPC_STAT, arg));
	CHECK(ds.sem_otime > 0);
}

static void test_timeout(void)
{
	int id = track(CHECK_OK(semget(IPC_PRIVATE, 1, 0600)));
	struct sembuf down = { 0, -1, 0 };
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	CHECK_ERR(semtimedop(id, &down, 1, &ts), EAGAIN);
	struct timespec bad = { 0, 1000000000 };
	CHECK_ERR(semtimedop(id, &down, 1, &bad), EINVAL);
	CHECK_ERR(semtimedop(id, &down, 1, UT_BADPTR), EFAULT);
	CHECK_OK(op(id, 0, 1, 0));
	CHECK_OK(semtimedop(id, &down, 1, &ts));	/* no wait needed */
}

static void on_alarm(int sig)
{
}

static void test_wait_ends(void)
{
	int id = track(CHECK_OK(semget(IPC_PRIVATE, 2, 0600)));
	/* A waiter woken by another process's operation, seen in GETNCNT. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(op(id, 0, -2, 0) == 0 ? 0 : 1);
	CHECK(wait_for_waiters(id, 0, 1, 0));
	CHECK_EQ(semctl(id, 0, GETNCNT), 1);
	CHECK_OK(op(id, 0, 1, 0));		/* not enough yet */
	CHECK_EQ(semctl(id, 0, GETNCNT), 1);
	CHECK_OK(op(id, 0, 1, 0));
	CHECK_EQ(child_status(pid), 0);
	CHECK_EQ(semctl(id, 0, GETVAL), 0);
	CHECK_EQ(semctl(id, 0, GETPID), pid);	/* the waiter's operation */

	/* A signal with a handler ends the wait with EINTR. */
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGUSR1, &sa, NULL);
	pid = fork();
	if (pid == 0) {
		int r = op(id, 0, -1, 0);
		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	CHECK(wait_for_waiters(id, 0, 1, 0));
	kill(pid, SIGUSR1);
	CHECK_EQ(child_status(pid), 0);
	CHECK_EQ(semctl(id, 0, GETNCNT), 0);

	/* Removal wakes a waiter for zero with EIDRM. */
	union semun one = { .val = 1 };
	CHECK_OK(semctl(id, 1, SETVAL, one));
	pid = fork();
	if (pid == 0) {
		int r = op(id, 1, 0, 0);
		_exit(r == -1 && errno == EIDRM ? 0 : 1);
	}
	CHECK(wait_for_waiters(id, 1, 1, 1));
	CHECK_EQ(semctl(id, 1, GETZCNT), 1);
	CHECK_OK(semctl(id, 0, IPC_RMID));
	CHECK_EQ(child_status(pid), 0);
	CHECK_ERR(semctl(id, 0, GETVAL), EINVAL);
}

static void test_undo(void)
{
	int id = track(CHECK_OK(semget(IPC_PRIVATE, 1, 0600)));
	union semun arg = { .val = 3 };
	CHECK_OK(semctl(id, 0, SETVAL, arg));
	pid_t pid = fork();
	if (pid == 0) {
		if (op(id, 0, -2, SEM_UNDO) != 0 || op(id, 0, 1, 0) != 0)
			_exit(1);
		_exit(semctl(id, 0, GETVAL) == 2 ? 0 : 2);
	}
	CHECK_EQ(child_status(pid), 0);
	CHECK_EQ(semctl(id, 0, GETVAL), 4);	/* 3 - 2 + 1, and the 2 given back */
	/* SETVAL clears the adjustments: nothing is given back. */
	pid = fork();
	if (pid == 0) {
		if (op(id, 0, -4, SEM_UNDO) != 0)
			_exit(1);
		union semun a = { .val = 1 };
		_exit(semctl(id, 0, SETVAL, a) == 0 ? 0 : 2);
	}
	CHECK_EQ(child_status(pid), 0);
	CHECK_EQ(semctl(id, 0, GETVAL), 1);
}

static void test_shared_counter(void)
{
	int sem = track(CHECK_OK(semget(IPC_PRIVATE, 1, 0600)));
	int shm = CHECK_OK(shmget(IPC_PRIVATE, 4096, 0600));
	volatile long *count = shmat(shm, NULL, 0);
	shmctl(shm, IPC_RMID, NULL);		/* gone once we all detach */
	CHECK(count != (long *)-1);
	if (count == (long *)-1)
		return;
	CHECK_OK(op(sem, 0, 1, 0));		/* the mutex starts free */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int n = ncpu < 2 ? 2 : ncpu > 16 ? 16 : (int)ncpu;
	pid_t pids[16];
	for (int c = 0; c < n; c++) {
		pids[c] = fork();
		if (pids[c] == 0) {
			for (int i = 0; i < INCREMENTS; i++) {
				if (op(sem, 0, -1, SEM_UNDO) != 0)
					_exit(1);
				long v = *count;
				*count = v + 1;
				if (op(sem, 0, 1, SEM_UNDO) != 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	int ok = 0;
	for (int c = 0; c < n; c++)
		ok += pids[c] > 0 && child_status(pids[c]) == 0;
	CHECK_EQ(ok, n);
	CHECK_EQ(*count, (long)n * INCREMENTS);
	CHECK_EQ(semctl(sem, 0, GETVAL), 1);
	shmdt((void *)count);
}

static int shared_id;
static key_t shared_key;

static void as_nobody(void *arg)
{
	CHECK_ERR(semctl(shared_id, 0, GETVAL), EACCES);
	CHECK_ERR(op(shared_id, 0, 1, IPC_NOWAIT), EACCES);
	CHECK_ERR(semctl(shared_id, 0, IPC_RMID), EPERM);
	CHECK_ERR(semget(shared_key, 1, 0600), EACCES);
}

static void test_other_user(void)
{
	shared_key = key_for(2);
	shared_id = track(CHECK_OK(semget(shared_key, 1, IPC_CREAT | 0600)));
	ut_unprivileged("another user's 0600 set", as_nobody, NULL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_get();
	test_values();
	test_timeout();
	test_wait_ends();
	test_undo();
	test_shared_counter();
	test_other_user();
	for (int i = 0; i < nmade; i++)
		semctl(made[i], 0, IPC_RMID);
	return ut_done();
}
