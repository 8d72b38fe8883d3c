/*
 * t_rseq: restartable sequences (the rseq system call).
 *
 * Registration's answers (EBUSY for the same area again, EINVAL for
 * another, a short or misaligned one or bad flags, EPERM to unregister
 * with another signature), cpu_id kept current as the thread moves
 * between CPUs (sched_setaffinity), and a critical section cut by a
 * signal resuming at its abort address with rseq_cs cleared.
 */
#include "ut.h"

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RSEQ_SIG 0x53053053

struct rseq_area {
	uint32_t cpu_id_start, cpu_id;
	uint64_t rseq_cs;
	uint32_t flags, node_id, mm_cid, pad;
} __attribute__((aligned(32)));

static struct rseq_area rs;

static long rseq(void *area, uint32_t len, int flags, uint32_t sig)
{
	return syscall(SYS_rseq, area, len, flags, sig);
}

static int getcpu_now(void)
{
	unsigned cpu = 0;
	syscall(SYS_getcpu, &cpu, NULL, NULL);
	return (int)cpu;
}

static void check_register(void)
{
	rs.cpu_id = 0xffffffff;
	CHECK_OK(rseq(&rs, sizeof rs, 0, RSEQ_SIG));
	CHECK_EQ(rs.cpu_id, getcpu_now());
	CHECK_EQ(rs.cpu_id_start, rs.cpu_id);
	CHECK_ERR(rseq(&rs, sizeof rs, 0, RSEQ_SIG), EBUSY);
	static struct rseq_area other;
	CHECK_ERR(rseq(&other, sizeof other, 0, RSEQ_SIG), EINVAL);
	CHECK_ERR(rseq(&rs, sizeof rs, 1, RSEQ_SIG + 1), EPERM);    /* another signature */
	CHECK_OK(rseq(&rs, sizeof rs, 1, RSEQ_SIG));                /* unregister */
	CHECK_ERR(rseq(&rs, sizeof rs, 1, RSEQ_SIG), EINVAL);       /* nothing to unregister */
	CHECK_ERR(rseq(&rs, 16, 0, RSEQ_SIG), EINVAL);
	CHECK_ERR(rseq((char *)&rs + 4, sizeof rs, 0, RSEQ_SIG), EINVAL);
	CHECK_ERR(rseq(&rs, sizeof rs, 2, RSEQ_SIG), EINVAL);
	CHECK_OK(rseq(&rs, sizeof rs, 0, RSEQ_SIG));
}

static void check_moves(void)
{
	cpu_set_t all, one;
	CHECK_OK(sched_getaffinity(0, sizeof all, &all));
	if (CPU_COUNT(&all) < 2) {
		ut_note("one CPU: no moves to watch");
		return;
	}
	for (int c = 0, seen = 0; c < CPU_SETSIZE && seen < 2; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		seen++;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		CHECK_OK(sched_setaffinity(0, sizeof one, &one));
		CHECK_EQ(rs.cpu_id, c);                         /* current on the way back */
		CHECK_EQ(rs.cpu_id, getcpu_now());
	}
	CHECK_OK(sched_setaffinity(0, sizeof all, &all));
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* Spin inside a critical section until something aborts it; 1 when it
 * was aborted (it never ends otherwise). */
static int spin_until_aborted(void)
{
	int aborted = 0;
	__asm__ volatile(
		".pushsection .data.rseq_cs, \"aw\"\n"
		".balign 32\n"
		"3: .long 0, 0\n"
		".quad 1f, 2f - 1f, 4f\n"
		".popsection\n"
		"leaq 3b(%%rip), %%rax\n"
		"movq %%rax, %[cs]\n"
		"1: jmp 1b\n"
		"2: jmp 5f\n"
		".long 0x53053053\n"
		"4: movl $1, %[ab]\n"
		"5:\n"
		: [ab] "+m"(aborted), [cs] "=m"(rs.rseq_cs)
		:
		: "rax", "memory", "cc");
	return aborted;
}

static void check_abort(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
	int p[2];
	CHECK_OK(pipe(p));
	pid_t parent = getpid();
	pid_t child = fork();
	if (child == 0) {
		ut_await(p[0]);
		struct timespec nap = { 0, 50000000 };
		for (int i = 0; i < 100; i++) {         /* until the parent is past it */
			nanosleep(&nap, NULL);
			if (kill(parent, SIGUSR1) != 0)
				break;
		}
		_exit(0);
	}
	ut_tell(p[1]);
	CHECK_EQ(spin_until_aborted(), 1);
	CHECK_EQ(rs.rseq_cs, 0);                        /* cleared by the abort */
	kill(child, SIGKILL);
	ut_wait(child);
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	check_register();
	check_moves();
	check_abort();
	return ut_done();
}
