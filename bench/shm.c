/*
 * shm -- shmat and shmdt of a one-page System V shared memory segment,
 * touching the page in between (so each attach maps the page on its first
 * store): one operation is attach, store, detach.
 *
 * System calls: shmget, shmctl (IPC_RMID), shmat, shmdt, clock_gettime.
 */
#include "bench.h"
#include <sys/ipc.h>
#include <sys/shm.h>

const char bench_name[] = "shm";

long long measure(long n)
{
	int id = syscall(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (id < 0)
		return -errno;
	long long err = 0;
	long long start = bench_now_ns();
	for (long i = 0; i < n; i++) {
		long addr = syscall(SYS_shmat, id, NULL, 0);
		if (addr == -1) {
			err = -errno;
			break;
		}
		*(volatile long *)addr = i;
		if (syscall(SYS_shmdt, addr) < 0) {
			err = -errno;
			break;
		}
	}
	long long ns = bench_now_ns() - start;
	syscall(SYS_shmctl, id, IPC_RMID, NULL);
	return err ? err : ns;
}

BENCH_MAIN
