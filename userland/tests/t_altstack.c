/*
 * t_altstack: the alternate signal stack (sigaltstack, SA_ONSTACK).
 *
 * sigaltstack's answers and errors (ENOMEM below MINSIGSTKSZ, EINVAL for
 * bad flags, EPERM while running on the stack), a handler with
 * SA_ONSTACK running on the stack and one without it not, the frame's
 * uc_stack, SS_AUTODISARM (disarmed inside the handler, armed again
 * after it returns), a SIGSEGV from a stack overflow caught on the
 * alternate stack (the reason programs set one up), fork keeping the
 * stack and a new thread starting without one.
 */
#include "ut.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define ALT_SIZE (64 * 1024)
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif

static char *alt;
static volatile uintptr_t handler_sp;
static volatile int inside_flags, inside_set_errno, uc_flags, try_set;
static volatile uintptr_t uc_sp;
static volatile size_t uc_size;

static int on_alt(uintptr_t sp)
{
	return sp > (uintptr_t)alt && sp <= (uintptr_t)alt + ALT_SIZE;
}

static void look(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	volatile char here;
	stack_t now, again = { .ss_sp = alt, .ss_size = ALT_SIZE };
	(void)sig;
	(void)si;
	handler_sp = (uintptr_t)&here;
	sigaltstack(NULL, &now);
	inside_flags = now.ss_flags;
	if (try_set)
		inside_set_errno = sigaltstack(&again, NULL) == 0 ? 0 : errno;
	uc_sp = (uintptr_t)uc->uc_stack.ss_sp;
	uc_size = uc->uc_stack.ss_size;
	uc_flags = uc->uc_stack.ss_flags;
}

static void install(int flags)
{
	struct sigaction sa = { .sa_sigaction = look, .sa_flags = SA_SIGINFO | flags };
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
}

/* The system call itself: musl's wrapper checks the size and the flags
 * before the kernel does. */
static int raw_sigaltstack(const stack_t *ss, stack_t *old)
{
	return (int)syscall(SYS_sigaltstack, ss, old);
}

static void check_calls(void)
{
	stack_t old, ss = { .ss_sp = alt, .ss_size = 1000 };
	CHECK_OK(sigaltstack(NULL, &old));
	CHECK_EQ(old.ss_flags, SS_DISABLE);
	CHECK_EQ(old.ss_size, 0);
	CHECK_ERR(raw_sigaltstack(&ss, NULL), ENOMEM);
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 5;
	CHECK_ERR(raw_sigaltstack(&ss, NULL), EINVAL);
	CHECK_ERR(raw_sigaltstack((stack_t *)8, NULL), EFAULT);
	CHECK_ERR(raw_sigaltstack(NULL, (stack_t *)8), EFAULT);
	ss.ss_flags = SS_ONSTACK;               /* taken as 0, as Linux */
	CHECK_OK(raw_sigaltstack(&ss, NULL));
	ss.ss_flags = 0;
	CHECK_OK(sigaltstack(&ss, NULL));
	CHECK_OK(sigaltstack(NULL, &old));
	CHECK_EQ(old.ss_flags, 0);
	CHECK(old.ss_sp == alt);
	CHECK_EQ(old.ss_size, ALT_SIZE);
}

static void check_onstack(void)
{
	install(SA_ONSTACK);
	try_set = 1;
	raise(SIGUSR1);
	try_set = 0;
	CHECK(on_alt(handler_sp));
	CHECK_EQ(inside_flags, SS_ONSTACK);
	CHECK_EQ(inside_set_errno, EPERM);
	CHECK(uc_sp == (uintptr_t)alt);
	CHECK_EQ(uc_size, ALT_SIZE);
	CHECK_EQ(uc_flags, 0);
	install(0);
	raise(SIGUSR1);
	CHECK(!on_alt(handler_sp));
	CHECK_EQ(inside_flags, 0);
}

static void check_autodisarm(void)
{
	stack_t ss = { .ss_sp = alt, .ss_size = ALT_SIZE, .ss_flags = SS_AUTODISARM }, old;
	if (sigaltstack(&ss, NULL) != 0) {
		ut_note("SS_AUTODISARM not supported here (errno %d)", errno);
		return;
	}
	install(SA_ONSTACK);
	raise(SIGUSR1);
	CHECK(on_alt(handler_sp));
	CHECK_EQ(inside_flags, SS_DISABLE);     /* disarmed while the handler runs */
	CHECK_EQ(uc_flags, (int)SS_AUTODISARM);
	CHECK_OK(sigaltstack(NULL, &old));      /* armed again by rt_sigreturn */
	CHECK_EQ(old.ss_flags, (int)SS_AUTODISARM);
	CHECK(old.ss_sp == alt);
	ss.ss_flags = 0;
	CHECK_OK(sigaltstack(&ss, NULL));
}

/* ---- a stack overflow caught on the alternate stack ---- */

static sigjmp_buf overflow_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(overflow_jmp, 1);
}

static int recurse(volatile char *p)
{
	volatile char pad[4096];
	pad[0] = *p;
	return recurse(pad) + pad[1];
}

static void overflow_child(void *arg)
{
	(void)arg;
	stack_t ss = { .ss_sp = alt, .ss_size = ALT_SIZE };
	CHECK_OK(sigaltstack(&ss, NULL));
	struct sigaction sa = { .sa_handler = on_segv, .sa_flags = SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGSEGV, &sa, NULL));
	char c = 0;
	if (sigsetjmp(overflow_jmp, 1) == 0) {
		recurse(&c);
		CHECK(0);                       /* not reached */
	}
	CHECK(1);                               /* the handler ran on the alternate stack */
}

static void check_fork(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		stack_t old;
		int ok = sigaltstack(NULL, &old) == 0 && old.ss_sp == alt && old.ss_size == ALT_SIZE;
		_exit(ok ? 0 : 1);
	}
	CHECK_EQ(ut_wait(pid), 0);
}

static void *thread_look(void *arg)
{
	stack_t old;
	(void)arg;
	if (sigaltstack(NULL, &old) != 0)
		return (void *)1;
	return (void *)(uintptr_t)(old.ss_flags == SS_DISABLE ? 0 : 2);
}

static void check_thread(void)
{
	pthread_t t;
	void *r = (void *)9;
	CHECK_EQ(pthread_create(&t, NULL, thread_look, NULL), 0);
	CHECK_EQ(pthread_join(t, &r), 0);
	CHECK(r == NULL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	alt = malloc(ALT_SIZE);
	check_calls();
	check_onstack();
	check_autodisarm();
	check_fork();
	check_thread();
	ut_child("overflow", overflow_child, NULL, 0);
	return ut_done();
}
