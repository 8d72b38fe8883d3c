/*
 * msg -- a round trip of a 64-byte message between two processes through
 * one System V message queue: the parent sends type 1 and receives type
 * 2, the child receives type 1 and sends it back as type 2.
 *
 * System calls: msgget, msgctl (IPC_RMID), msgsnd, msgrcv, fork,
 * exit_group (child), wait4, clock_gettime.
 */
#include "bench.h"
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/wait.h>

const char bench_name[] = "msg";

struct message {
	long type;
	char text[64];
};

long long measure(long n)
{
	int id = syscall(SYS_msgget, IPC_PRIVATE, IPC_CREAT | 0600);
	if (id < 0)
		return -errno;
	long pid = syscall(SYS_fork);
	if (pid < 0) {
		long long err = -errno;
		syscall(SYS_msgctl, id, IPC_RMID, NULL);
		return err;
	}
	struct message m;
	memset(&m, 'm', sizeof m);
	if (pid == 0) {
		for (long i = 0; i < n; i++) {
			if (syscall(SYS_msgrcv, id, &m, sizeof m.text, 1, 0) != sizeof m.text)
				syscall(SYS_exit_group, 1);
			m.type = 2;
			if (syscall(SYS_msgsnd, id, &m, sizeof m.text, 0) < 0)
				syscall(SYS_exit_group, 1);
		}
		syscall(SYS_exit_group, 0);
	}
	long long err = 0;
	long long start = bench_now_ns();
	for (long i = 0; i < n; i++) {
		m.type = 1;
		if (syscall(SYS_msgsnd, id, &m, sizeof m.text, 0) < 0 ||
		    syscall(SYS_msgrcv, id, &m, sizeof m.text, 2, 0) != sizeof m.text) {
			err = errno ? -errno : -EIO;
			break;
		}
	}
	long long ns = bench_now_ns() - start;
	syscall(SYS_msgctl, id, IPC_RMID, NULL);
	int status;
	syscall(SYS_wait4, pid, &status, 0, NULL);
	if (err)
		return err;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return ns;
}

BENCH_MAIN
