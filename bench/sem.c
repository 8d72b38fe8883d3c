/*
 * sem -- a round trip between two processes through a pair of System V
 * semaphores (lmbench's lat_sem): the parent raises semaphore 0 and waits
 * on semaphore 1, the child waits on 0 and raises 1.  Each operation is
 * one round trip: two semops that wake a sleeper and two that sleep.
 *
 * System calls: semget, semctl (IPC_RMID), semop, fork, exit_group
 * (child), wait4, clock_gettime.
 */
#include "bench.h"
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>

const char bench_name[] = "sem";

static long sem_step(int id, int num, int op)
{
	struct sembuf sb = { .sem_num = num, .sem_op = op, .sem_flg = 0 };

	return syscall(SYS_semop, id, &sb, 1);
}

long long measure(long n)
{
	int id = syscall(SYS_semget, IPC_PRIVATE, 2, IPC_CREAT | 0600);
	if (id < 0)
		return -errno;
	long pid = syscall(SYS_fork);
	if (pid < 0) {
		long long err = -errno;
		syscall(SYS_semctl, id, 0, IPC_RMID, 0);
		return err;
	}
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (sem_step(id, 0, -1) < 0 || sem_step(id, 1, 1) < 0)
				syscall(SYS_exit_group, 1);
		syscall(SYS_exit_group, 0);
	}
	long long err = 0;
	long long start = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (sem_step(id, 0, 1) < 0 || sem_step(id, 1, -1) < 0) {
			err = -errno;
			break;
		}
	}
	long long ns = bench_now_ns() - start;
	syscall(SYS_semctl, id, 0, IPC_RMID, 0);    /* a child still waiting gets EIDRM */
	int status;
	syscall(SYS_wait4, pid, &status, 0, NULL);
	if (err)
		return err;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return ns;
}

BENCH_MAIN
