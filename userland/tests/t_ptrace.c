/*
 * t_ptrace: ptrace as strace and gdb use it, as Linux answers.
 *
 * Syscall-stops (TRACEME, TRACESYSGOOD, a call's number changed at its
 * entry and its result at its exit, GET_SYSCALL_INFO at both, the exit
 * event and its message, the child's own exit status); memory (PEEKDATA,
 * POKEDATA, and POKETEXT into a read-only mapping: the child sees the
 * new word, the parent's copy stays; /proc/PID/mem the same); registers (GETREGS against
 * GETREGSET, PEEKUSER, an xmm register read and written through
 * GETFPREGS and SETFPREGS, a single step moving rip); signals (one the
 * tracer suppresses, one it injects, one the tracee ignores still shown
 * to the tracer); SEIZE with INTERRUPT and KILL; a seized group-stop
 * and PTRACE_LISTEN until SIGCONT; TRACEFORK (the event's
 * message, the grandchild's first stop, its exit told to the tracer); an
 * exec's event and TracerPid in /proc; /proc/self/auxv; the errors
 * (ESRCH, EPERM, EIO, EINVAL).
 */
#include "ut.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <elf.h>
#include <sys/auxv.h>

#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e
#endif

/* Linux's struct ptrace_syscall_info (<linux/ptrace.h>, which musl's
 * build has not). */
struct sc_info {
	uint8_t op, pad[3];
	uint32_t arch;
	uint64_t ip, sp;
	union {
		struct { uint64_t nr, args[6]; } entry;
		struct { int64_t rval; uint8_t is_error; } exit;
	};
};
#define SC_INFO_ENTRY 1
#define SC_INFO_EXIT  2

static volatile long child_word = 1111;
static const long const_word = 2222;    /* in a read-only mapping */
static volatile int got_usr2;

static long pt(long req, pid_t pid, unsigned long addr, unsigned long data)
{
	return syscall(SYS_ptrace, req, pid, addr, data);
}

/* Fork a child that does TRACEME, stops itself with SIGSTOP, then runs
 * fn; the parent sees the stop. */
static pid_t traced_child(int (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		raise(SIGSTOP);
		_exit(fn());
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	return pid;
}

/* Resume pid with req and wait for its next stop: the status. */
static int step(pid_t pid, long req, int sig)
{
	int st = 0;
	CHECK_EQ(pt(req, pid, 0, sig), 0);
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	return st;
}

static int finish(pid_t pid)
{
	int st = 0;
	pt(PTRACE_DETACH, pid, 0, 0);
	waitpid(pid, &st, 0);
	return st;
}

/* ---- syscall-stops ---- */

static int calls_child(void)
{
	long r = syscall(SYS_getppid);
	return r == 12345 ? 7 : 1;
}

static void test_syscall_stops(void)
{
	pid_t pid = traced_child(calls_child);
	CHECK_EQ(pt(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT), 0);
	/* To getppid's entry (raise may make a call or two first: each is
	 * an entry and an exit stop). */
	struct user_regs_struct r;
	int st, calls = 0;
	do {
		if (calls++)
			step(pid, PTRACE_SYSCALL, 0);   /* its exit */
		st = step(pid, PTRACE_SYSCALL, 0);
		CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == (SIGTRAP | 0x80));
		CHECK_EQ(pt(PTRACE_GETREGS, pid, 0, (unsigned long)&r), 0);
	} while (r.orig_rax != SYS_getppid && calls < 8);
	CHECK_EQ(r.orig_rax, SYS_getppid);
	CHECK_EQ((long)r.rax, -ENOSYS);
	struct sc_info info;
	memset(&info, 0, sizeof info);
	long n = pt(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, (unsigned long)&info);
	CHECK(n >= (long)offsetof(struct sc_info, entry.args));
	CHECK_EQ(info.op, SC_INFO_ENTRY);
	CHECK_EQ(info.entry.nr, SYS_getppid);
	CHECK_EQ(info.arch, 0xc000003e);
	r.orig_rax = SYS_getpid;                /* run getpid instead */
	CHECK_EQ(pt(PTRACE_SETREGS, pid, 0, (unsigned long)&r), 0);
	st = step(pid, PTRACE_SYSCALL, 0);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == (SIGTRAP | 0x80));
	CHECK_EQ(pt(PTRACE_GETREGS, pid, 0, (unsigned long)&r), 0);
	CHECK_EQ((long)r.rax, pid);             /* getpid's answer */
	memset(&info, 0, sizeof info);
	CHECK(pt(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, (unsigned long)&info) > 0);
	CHECK_EQ(info.op, SC_INFO_EXIT);
	CHECK_EQ(info.exit.rval, pid);
	CHECK_EQ(info.exit.is_error, 0);
	r.rax = 12345;                          /* and say something else */
	CHECK_EQ(pt(PTRACE_SETREGS, pid, 0, (unsigned long)&r), 0);
	st = step(pid, PTRACE_CONT, 0);          /* to the exit event */
	CHECK(WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_EXIT);
	unsigned long msg = 0;
	CHECK_EQ(pt(PTRACE_GETEVENTMSG, pid, 0, (unsigned long)&msg), 0);
	CHECK_EQ(msg, 7 << 8);
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, 0), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}

/* ---- memory ---- */

static int memory_child(void)
{
	raise(SIGSTOP);                         /* the parent pokes meanwhile */
	return (child_word == 3333 ? 0 : 1) | (*(volatile const long *)&const_word == 4444 ? 0 : 2);
}

static void test_memory(void)
{
	pid_t pid = traced_child(memory_child);
	/* The raw call stores the word at data (glibc's wrapper returns it). */
	long word = 0;
	CHECK_EQ(pt(PTRACE_PEEKDATA, pid, (unsigned long)&child_word, (unsigned long)&word), 0);
	CHECK_EQ(word, 1111);
	CHECK_EQ(pt(PTRACE_POKEDATA, pid, (unsigned long)&child_word, 3333), 0);
	CHECK_EQ(pt(PTRACE_POKETEXT, pid, (unsigned long)&const_word, 4444), 0);
	CHECK_EQ(pt(PTRACE_PEEKTEXT, pid, (unsigned long)&const_word, (unsigned long)&word), 0);
	CHECK_EQ(word, 4444);
	CHECK_EQ(*(volatile const long *)&const_word, 2222);      /* ours is not theirs */
	/* /proc/PID/mem reads and writes the same way (gdb's first choice). */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", pid);
	int fd = CHECK_OK(open(path, O_RDWR));
	CHECK_EQ(pread(fd, &word, sizeof word, (off_t)(uintptr_t)&child_word), sizeof word);
	CHECK_EQ(word, 3333);
	word = 4444;
	CHECK_EQ(pwrite(fd, &word, sizeof word, (off_t)(uintptr_t)&const_word), sizeof word);
	CHECK_ERR(pread(fd, &word, sizeof word, 8), EIO);
	close(fd);
	CHECK_ERR(pt(PTRACE_PEEKDATA, pid, 8, (unsigned long)&word), EIO);
	CHECK_ERR(pt(PTRACE_POKEDATA, pid, 8, 1), EIO);
	int st = step(pid, PTRACE_CONT, 0);      /* its own SIGSTOP */
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, 0), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

/* ---- registers ---- */

/* Put a known value in xmm0 and stop with it there (the stop is the
 * tgkill's return); then report what xmm0 holds. */
static int fp_child(void)
{
	uint64_t in = 0x1122334455667788ULL, out;
	long tid = syscall(SYS_gettid), nr = SYS_tgkill;
	__asm__ volatile("movq %[in], %%xmm0\n\t"
			 "syscall\n\t"
			 "movq %%xmm0, %[out]"
			 : [out] "=r"(out), "+a"(nr)
			 : [in] "r"(in), "D"((long)getpid()), "S"(tid), "d"((long)SIGSTOP)
			 : "rcx", "r11", "xmm0", "memory");
	return out == 0x99aabbccddeeff00ULL ? 0 : out == in ? 5 : 6;
}

static void test_registers(void)
{
	pid_t pid = traced_child(fp_child);
	int st = step(pid, PTRACE_CONT, 0);      /* the asm's SIGSTOP */
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	struct user_regs_struct r, r2;
	CHECK_EQ(pt(PTRACE_GETREGS, pid, 0, (unsigned long)&r), 0);
	struct iovec iov = { &r2, sizeof r2 };
	CHECK_EQ(pt(PTRACE_GETREGSET, pid, NT_PRSTATUS, (unsigned long)&iov), 0);
	CHECK_EQ(iov.iov_len, sizeof r2);
	CHECK(memcmp(&r, &r2, sizeof r) == 0);
	long rip = 0;
	CHECK_EQ(pt(PTRACE_PEEKUSER, pid, offsetof(struct user, regs.rip), (unsigned long)&rip), 0);
	CHECK_EQ(rip, (long)r.rip);
	CHECK_ERR(pt(PTRACE_PEEKUSER, pid, 3, (unsigned long)&rip), EIO);
	struct user_fpregs_struct fp;
	CHECK_EQ(pt(PTRACE_GETFPREGS, pid, 0, (unsigned long)&fp), 0);
	uint64_t xmm0;
	memcpy(&xmm0, fp.xmm_space, 8);
	CHECK_EQ(xmm0, 0x1122334455667788ULL);
	xmm0 = 0x99aabbccddeeff00ULL;
	memcpy(fp.xmm_space, &xmm0, 8);
	CHECK_EQ(pt(PTRACE_SETFPREGS, pid, 0, (unsigned long)&fp), 0);
	/* One instruction: rip moves on, and the stop is a SIGTRAP. */
	st = step(pid, PTRACE_SINGLESTEP, 0);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP);
	CHECK_EQ(pt(PTRACE_GETREGS, pid, 0, (unsigned long)&r2), 0);
	if (!(r2.rip > r.rip && r2.rip < r.rip + 16))
		ut_note("single step: rip 0x%llx, then 0x%llx", (unsigned long long)r.rip,
			(unsigned long long)r2.rip);
	CHECK(r2.rip > r.rip && r2.rip < r.rip + 16);
	CHECK_EQ(r2.eflags & 0x100, 0);          /* the tracer's TF is not shown */
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, 0), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

/* ---- signals ---- */

static void on_usr2(int sig)
{
	(void)sig;
	got_usr2++;
}

static int signals_child(void)
{
	signal(SIGUSR2, on_usr2);
	signal(SIGUSR1, on_usr2);
	signal(SIGWINCH, SIG_IGN);
	raise(SIGSTOP);                 /* the parent queues signals meanwhile */
	return got_usr2;
}

static void test_signals(void)
{
	pid_t pid = traced_child(signals_child);
	int st = step(pid, PTRACE_CONT, 0);      /* the second SIGSTOP */
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	siginfo_t si;
	CHECK_EQ(pt(PTRACE_GETSIGINFO, pid, 0, (unsigned long)&si), 0);
	CHECK_EQ(si.si_signo, SIGSTOP);
	kill(pid, SIGUSR1);
	kill(pid, SIGWINCH);
	int seen = 0, usr1 = 0, winch = 0;
	st = step(pid, PTRACE_CONT, 0);          /* suppress the SIGSTOP */
	while (WIFSTOPPED(st) && seen++ < 4) {
		int sig = WSTOPSIG(st);
		usr1 += sig == SIGUSR1;
		winch += sig == SIGWINCH;
		/* SIGUSR1 suppressed; SIGUSR2 injected in its place once. */
		st = step(pid, PTRACE_CONT, sig == SIGUSR1 ? SIGUSR2 : 0);
		if (sig == SIGUSR2)
			break;
	}
	CHECK_EQ(usr1, 1);
	CHECK_EQ(winch, 1);                     /* ignored, and still shown */
	if (WIFSTOPPED(st))
		st = finish(pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 1);            /* the handler ran once: the injected SIGUSR2 */
}

/* ---- SEIZE, INTERRUPT, KILL, TRACEFORK ---- */

static void test_seize(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_ERR(pt(PTRACE_SEIZE, pid, 0, 1u << 30), EIO);
	CHECK_EQ(pt(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD), 0);
	CHECK_ERR(pt(PTRACE_SEIZE, pid, 0, 0), EPERM);      /* traced already */
	CHECK_ERR(pt(PTRACE_GETREGS, pid, 0, 0), ESRCH);    /* not stopped */
	CHECK_EQ(pt(PTRACE_INTERRUPT, pid, 0, 0), 0);
	int st;
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && (st >> 16) == PTRACE_EVENT_STOP);
	char path[64], buf[2048];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	long n = ut_read_file(path, buf, sizeof buf - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	char want[64];
	snprintf(want, sizeof want, "TracerPid:\t%d\n", getpid());
	CHECK(strstr(buf, want) != NULL);
	CHECK_ERR(pt(0x7777, pid, 0, 0), EIO);
	CHECK_ERR(pt(PTRACE_SETOPTIONS, pid, 0, 1u << 30), EINVAL);
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, 0), 0);
	CHECK_EQ(pt(PTRACE_KILL, pid, 0, 0), 0);
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* A seized tracee's group-stop: reported as PTRACE_EVENT_STOP with the
 * stop signal, no siginfo; PTRACE_LISTEN leaves it stopped until
 * SIGCONT, which traps it again (EVENT_STOP, SIGTRAP) before the
 * SIGCONT's own signal-delivery-stop. */
static void test_listen(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK_EQ(pt(PTRACE_SEIZE, pid, 0, 0), 0);
	kill(pid, SIGSTOP);
	int st;
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP && (st >> 16) == 0);
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, SIGSTOP), 0);     /* let the stop happen */
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP && (st >> 16) == PTRACE_EVENT_STOP);
	siginfo_t si;
	CHECK_EQ(pt(PTRACE_GETSIGINFO, pid, 0, (unsigned long)&si), 0);
	CHECK_EQ(si.si_signo, SIGSTOP);         /* seized: the stop's own info */
	CHECK_EQ(si.si_code, SIGSTOP | (PTRACE_EVENT_STOP << 8));
	CHECK_EQ(pt(PTRACE_LISTEN, pid, 0, 0), 0);
	CHECK_EQ(waitpid(pid, &st, __WALL | WNOHANG), 0);  /* stopped on, nothing new */
	kill(pid, SIGCONT);
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && (st >> 16) == PTRACE_EVENT_STOP);
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, 0), 0);
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGCONT && (st >> 16) == 0);
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, 0), 0);
	kill(pid, SIGKILL);
	CHECK_EQ(waitpid(pid, &st, __WALL), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static int forker(void)
{
	pid_t g = fork();
	if (g == 0)
		_exit(9);
	int st;
	return waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 9 ? 4 : 1;
}

static void test_tracefork(void)
{
	pid_t pid = traced_child(forker);
	CHECK_EQ(pt(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEFORK), 0);
	int st = step(pid, PTRACE_CONT, 0);
	CHECK(WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_FORK);
	unsigned long g = 0;
	CHECK_EQ(pt(PTRACE_GETEVENTMSG, pid, 0, (unsigned long)&g), 0);
	CHECK(g > 0);
	/* The grandchild starts traced, stopped by a SIGSTOP. */
	int gst;
	CHECK_EQ(waitpid((pid_t)g, &gst, __WALL), (pid_t)g);
	CHECK(WIFSTOPPED(gst) && WSTOPSIG(gst) == SIGSTOP);
	CHECK_EQ(pt(PTRACE_CONT, (pid_t)g, 0, 0), 0);
	CHECK_EQ(waitpid((pid_t)g, &gst, __WALL), (pid_t)g);      /* its exit, told to us */
	CHECK(WIFEXITED(gst) && WEXITSTATUS(gst) == 9);
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, 0), 0);
	int n = 0;
	while (waitpid(pid, &st, __WALL) == pid && WIFSTOPPED(st) && n++ < 4)
		pt(PTRACE_CONT, pid, 0, WSTOPSIG(st) == SIGCHLD ? SIGCHLD : 0);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 4);
}

/* ---- exec ---- */

static int execer(void)
{
	execl(ut_self, ut_self, "exec-child", (char *)NULL);
	return 99;
}

static void test_exec(void)
{
	pid_t pid = traced_child(execer);
	CHECK_EQ(pt(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXEC), 0);
	int st = step(pid, PTRACE_CONT, 0);
	CHECK(WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_EXEC);
	unsigned long old = 0;
	CHECK_EQ(pt(PTRACE_GETEVENTMSG, pid, 0, (unsigned long)&old), 0);
	CHECK_EQ(old, (unsigned long)pid);
	CHECK_EQ(pt(PTRACE_CONT, pid, 0, 0), 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

/* ---- /proc/PID/auxv, which gdb reads to find a program ---- */

static void test_auxv(void)
{
	unsigned long v[128];
	long n = ut_read_file("/proc/self/auxv", v, sizeof v);
	CHECK(n > 0 && n % 16 == 0);
	unsigned long entry = 0, pagesz = 0, last = 1;
	for (long i = 0; i + 1 < n / 8; i += 2) {
		if (v[i] == AT_ENTRY)
			entry = v[i + 1];
		if (v[i] == AT_PAGESZ)
			pagesz = v[i + 1];
		last = v[i];
	}
	CHECK_EQ(entry, getauxval(AT_ENTRY));
	CHECK_EQ(pagesz, 4096);
	CHECK_EQ(last, AT_NULL);
}

/* ---- errors ---- */

static void test_errors(void)
{
	CHECK_ERR(pt(PTRACE_ATTACH, getpid(), 0, 0), EPERM);
	CHECK_ERR(pt(PTRACE_SEIZE, 0x3ffffff0, 0, 0), ESRCH);
	CHECK_ERR(pt(PTRACE_CONT, getpid(), 0, 0), ESRCH);
	CHECK_ERR(pt(PTRACE_GETREGS, 0x3ffffff0, 0, 0), ESRCH);
	pid_t pid = traced_child(calls_child);
	CHECK_ERR(pt(PTRACE_GETREGS, pid, 0, 8), EFAULT);
	CHECK_ERR(pt(PTRACE_CONT, pid, 0, 65), EIO);
	struct iovec iov = { NULL, 0 };
	CHECK_ERR(pt(PTRACE_GETREGSET, pid, 0x999, (unsigned long)&iov), EINVAL);
	CHECK_ERR(pt(PTRACE_LISTEN, pid, 0, 0), EIO);       /* not seized */
	CHECK_ERR(pt(PTRACE_INTERRUPT, pid, 0, 0), EIO);
	pt(PTRACE_KILL, pid, 0, 0);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st));
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "exec-child") == 0)
		return 3;
	ut_init(argc, argv);
	test_syscall_stops();
	test_memory();
	test_registers();
	test_signals();
	test_seize();
	test_listen();
	test_tracefork();
	test_exec();
	test_auxv();
	test_errors();
	return ut_done();
}
