/*
 * t_thread: user threads (clone with CLONE_THREAD through musl's pthreads).
 *
 * Many threads created and joined, one pinned to each CPU (affinity is
 * per thread); a mutex and condition
 * variable counter hammered by one thread per CPU, with the exact total;
 * gettid and the tid word (CLONE_PARENT_SETTID, set_tid_address cleared
 * and woken at exit, which pthread_join waits on); clone's EINVAL for the
 * flag sets Linux refuses; exit of the main thread while others run;
 * exit_group from a thread ending them all; fork from a thread (only the
 * caller continues); execve from a thread (the others end); a thread that
 * faults kills the process; wait4 sees the process only when its last
 * thread has gone.
 */
#include "ut.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 16 ? 16 : n;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ---- create and join ---- */

struct start_info {
	int index;
	pid_t tid;
	pid_t pid;
	int cpu;
};

static void *record(void *arg)
{
	struct start_info *si = arg;
	si->tid = gettid_();
	si->pid = getpid();
	si->cpu = sched_getcpu();
	return (void *)(intptr_t)(si->index * 3 + 1);
}

static void create_join_many(void)
{
	enum { ROUNDS = 8, PER = 16 };
	int bad_ret = 0, bad_pid = 0, dup_tid = 0, seen_cpus = 0;
	uint64_t cpumask = 0;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t th[PER];
		struct start_info si[PER];
		for (int i = 0; i < PER; i++) {
			si[i] = (struct start_info){ .index = i };
			CHECK_EQ(pthread_create(&th[i], NULL, record, &si[i]), 0);
		}
		for (int i = 0; i < PER; i++) {
			void *ret;
			CHECK_EQ(pthread_join(th[i], &ret), 0);
			bad_ret += ret != (void *)(intptr_t)(i * 3 + 1);
			bad_pid += si[i].pid != getpid() || si[i].tid == getpid() || si[i].tid <= 0;
			for (int j = 0; j < i; j++)
				dup_tid += si[j].tid == si[i].tid;
			if (si[i].cpu >= 0 && si[i].cpu < 64)
				cpumask |= 1ULL << si[i].cpu;
		}
	}
	for (uint64_t m = cpumask; m; m &= m - 1)
		seen_cpus++;
	CHECK_EQ(bad_ret, 0);
	CHECK_EQ(bad_pid, 0);
	CHECK_EQ(dup_tid, 0);
	CHECK_EQ(gettid_(), getpid());
	CHECK(seen_cpus >= 1);
	ut_note("threads ran on %d of %ld CPUs", seen_cpus, cpus());
}

/* ---- one thread pinned to each CPU ---- */

struct pinned {
	int cpu, ran_on;
	pthread_barrier_t *bar;
};

static void *run_pinned(void *arg)
{
	struct pinned *pn = arg;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(pn->cpu, &one);
	if (sched_setaffinity(0, sizeof one, &one) == 0)    /* 0: this thread only */
		pn->ran_on = sched_getcpu();
	pthread_barrier_wait(pn->bar);      /* the main thread looks at our mask */
	pthread_barrier_wait(pn->bar);
	return NULL;
}

static void threads_on_every_cpu(void)
{
	cpu_set_t all;
	CHECK_OK(sched_getaffinity(0, sizeof all, &all));
	int cpus_list[16], n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < 16; c++)
		if (CPU_ISSET(c, &all))
			cpus_list[n++] = c;
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
	pthread_t th[16];
	struct pinned pn[16];
	for (int i = 0; i < n; i++) {
		pn[i] = (struct pinned){ .cpu = cpus_list[i], .ran_on = -1, .bar = &bar };
		CHECK_EQ(pthread_create(&th[i], NULL, run_pinned, &pn[i]), 0);
	}
	pthread_barrier_wait(&bar);
	int right = 0, masks_right = 0;
	for (int i = 0; i < n; i++) {
		right += pn[i].ran_on == pn[i].cpu;
		cpu_set_t m;
		if (pthread_getaffinity_np(th[i], sizeof m, &m) == 0)
			masks_right += CPU_COUNT(&m) == 1 && CPU_ISSET(pn[i].cpu, &m);
	}
	/* The main thread's own mask is untouched by its threads'. */
	cpu_set_t mine;
	sched_getaffinity(0, sizeof mine, &mine);
	CHECK(CPU_EQUAL(&mine, &all));
	pthread_barrier_wait(&bar);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(right, n);
	CHECK_EQ(masks_right, n);
}

/* ---- a mutex and condition variable counter ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn = PTHREAD_COND_INITIALIZER;
static long counter, plain_counter;
static int next_turn, nworkers;

enum { BUMPS = 20000, TURNS = 200 };

static void *hammer(void *arg)
{
	int me = (int)(intptr_t)arg;
	for (int i = 0; i < BUMPS; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		plain_counter += 2;
		pthread_mutex_unlock(&lock);
	}
	/* Take turns in order: each waits on the condition for its own turn. */
	for (int i = 0; i < TURNS; i++) {
		pthread_mutex_lock(&lock);
		while (next_turn % nworkers != me)
			pthread_cond_wait(&turn, &lock);
		next_turn++;
		pthread_cond_broadcast(&turn);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void mutex_condvar_counter(void)
{
	nworkers = (int)cpus() * 2;
	pthread_t th[32];
	for (int i = 0; i < nworkers; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, hammer, (void *)(intptr_t)i), 0);
	for (int i = 0; i < nworkers; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(counter, (long)nworkers * BUMPS);
	CHECK_EQ(plain_counter, 2L * nworkers * BUMPS);
	CHECK_EQ(next_turn, nworkers * TURNS);
}

/* ---- CPU time per thread, summed for the process ---- */

static uint64_t clock_of(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *burn_cpu(void *arg)
{
	(void)arg;
	while (clock_of(CLOCK_THREAD_CPUTIME_ID) < 100 * 1000000ULL)
		;
	return NULL;
}

static void cpu_times(void)
{
	uint64_t main_before = clock_of(CLOCK_THREAD_CPUTIME_ID);
	uint64_t proc_before = clock_of(CLOCK_PROCESS_CPUTIME_ID);
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, burn_cpu, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);    /* sleeps: the main thread burns little */
	uint64_t main_used = clock_of(CLOCK_THREAD_CPUTIME_ID) - main_before;
	uint64_t proc_used = clock_of(CLOCK_PROCESS_CPUTIME_ID) - proc_before;
	CHECK(proc_used >= 100 * 1000000ULL);
	CHECK(main_used < 50 * 1000000ULL);
	ut_note("thread cpu: main %llu us, process %llu us", (unsigned long long)main_used / 1000,
		(unsigned long long)proc_used / 1000);
}

/* ---- the tid word ---- */

static volatile pid_t child_tid_word;

static void *sleep_a_little(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	return NULL;
}

static void tid_word_cleared(void)
{
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, sleep_a_little, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	/* set_tid_address returns the caller's tid. */
	CHECK_EQ(syscall(SYS_set_tid_address, &child_tid_word), gettid_());
}

/* ---- clone's refusals ---- */

static void clone_einval(void)
{
	char stack[256];
	void *sp = stack + sizeof stack;
	/* CLONE_THREAD without CLONE_SIGHAND, CLONE_SIGHAND without CLONE_VM. */
	CHECK_ERR(syscall(SYS_clone, CLONE_THREAD | CLONE_VM, sp, 0, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_clone, CLONE_SIGHAND, sp, 0, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_clone, CLONE_THREAD | CLONE_SIGHAND, sp, 0, 0, 0), EINVAL);
}

/* ---- the main thread exits first ---- */

static int to_parent[2], to_child[2];

/* Outlives the main thread: says so, then waits for the parent's word. */
static void *outlive_main(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);       /* the main thread has exited by now */
	char c;
	(void)!write(to_parent[1], "L", 1);
	(void)!read(to_child[0], &c, 1);
	syscall(SYS_exit_group, 7);
	return NULL;
}

static void main_exits_first(void)
{
	CHECK_OK(pipe(to_parent));
	CHECK_OK(pipe(to_child));
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, outlive_main, NULL))
			_exit(99);
		syscall(SYS_exit, 0);   /* the main thread alone */
		_exit(98);
	}
	char c = 0;
	CHECK_EQ(read(to_parent[0], &c, 1), 1);
	CHECK_EQ(c, 'L');
	/* The process is not reapable while a thread lives (it waits for us). */
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0);
	CHECK_EQ(write(to_child[1], "G", 1), 1);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 7);
	close(to_parent[0]);
	close(to_parent[1]);
	close(to_child[0]);
	close(to_child[1]);
}

/* ---- exit_group from a thread ends the sleeping others ---- */

static void *sleep_long(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *spin_forever(void *arg)
{
	(void)arg;
	for (volatile unsigned long n = 0;; n++)
		;
	return NULL;
}

static void *exit_group_later(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 30 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	exit(42);
	return NULL;
}

static void exit_group_ends_all(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t a, b, c;
		pthread_create(&a, NULL, sleep_long, NULL);
		pthread_create(&b, NULL, spin_forever, NULL);
		pthread_create(&c, NULL, exit_group_later, NULL);
		for (;;)
			pause();
	}
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 42);
}

/* ---- fork from a thread ---- */

struct fork_result {
	pid_t child;
	int status;
	int threads_in_child;
};

static volatile int background_runs, background_stop;

static void *background(void *arg)
{
	(void)arg;
	while (!background_stop) {
		background_runs++;
		sched_yield();
	}
	return NULL;
}

static void *fork_here(void *arg)
{
	struct fork_result *r = arg;
	pid_t me = gettid_();
	r->child = fork();
	if (r->child == 0) {
		/* Only this thread continues: the tid is the new pid, and
		 * the background thread's counter stands still. */
		int before = background_runs;
		struct timespec ts = { 0, 30 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		int ok = gettid_() == getpid() && getpid() != me && background_runs == before;
		_exit(ok ? 5 : 6);
	}
	waitpid(r->child, &r->status, 0);
	return NULL;
}

static void fork_from_thread(void)
{
	pthread_t bg, f;
	struct fork_result r = { 0 };
	CHECK_EQ(pthread_create(&bg, NULL, background, NULL), 0);
	CHECK_EQ(pthread_create(&f, NULL, fork_here, &r), 0);
	CHECK_EQ(pthread_join(f, NULL), 0);
	CHECK(r.child > 0);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 5);
	background_stop = 1;
	CHECK_EQ(pthread_join(bg, NULL), 0);
}

/* ---- execve from a thread ---- */

static void *exec_here(void *arg)
{
	(void)arg;
	char *argv[] = { (char *)ut_self, "exec-child", NULL };
	execve(ut_self, argv, environ);
	_exit(97);
	return NULL;
}

static void exec_from_thread(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t a, b, e;
		pthread_create(&a, NULL, sleep_long, NULL);
		pthread_create(&b, NULL, spin_forever, NULL);
		pthread_create(&e, NULL, exec_here, NULL);
		for (;;)
			pause();
	}
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 33);
}

/* What the exec'd program checks: one thread, whose tid is the pid. */
static int exec_child(void)
{
	char buf[4096];
	long n = ut_read_file("/proc/self/status", buf, sizeof buf - 1);
	int one_thread = 1;
	if (n > 0) {
		buf[n] = 0;
		char *t = strstr(buf, "Threads:");
		one_thread = t && atoi(t + 8) == 1;
	}
	return gettid_() == getpid() && one_thread ? 33 : 34;
}

/* ---- /proc/PID/task ---- */

static pthread_barrier_t gate;
static volatile pid_t task_tids[3];

static void *wait_at_gate(void *arg)
{
	task_tids[(intptr_t)arg] = gettid_();
	pthread_barrier_wait(&gate);        /* all are here */
	pthread_barrier_wait(&gate);        /* the listing is done */
	return NULL;
}

static int thread_count_in_status(void)
{
	return (int)ut_proc_number("/proc/self/status", "Threads:");
}

/*
 * A joined thread leaves the count soon after its tid word clears, on Linux
 * as here: pthread_join returns at the clear, before the thread is released.
 * Wait (boundedly) for the count to reach the expected value.
 */
static int settled_thread_count(int expected)
{
	int count = thread_count_in_status();
	for (int i = 0; i < 200 && count != expected; i++) {
		sched_yield();
		count = thread_count_in_status();
	}
	return count;
}

static void proc_task_dir(void)
{
	pthread_t th[3];
	/* Threads joined by the tests before may still be leaving. */
	CHECK_EQ(settled_thread_count(1), 1);
	pthread_barrier_init(&gate, NULL, 4);
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, wait_at_gate, (void *)(intptr_t)i);
	pthread_barrier_wait(&gate);
	DIR *d = opendir("/proc/self/task");
	CHECK(d != NULL);
	int entries = 0, found = 0, me = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		entries++;
		int tid = atoi(e->d_name);
		me += tid == getpid();
		for (int i = 0; i < 3; i++)
			found += tid == task_tids[i];
	}
	if (d)
		closedir(d);
	CHECK_EQ(entries, 4);
	CHECK_EQ(found, 3);
	CHECK_EQ(me, 1);
	CHECK_EQ(thread_count_in_status(), 4);
	char path[64], comm[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)task_tids[1]);
	CHECK(ut_read_file(path, comm, sizeof comm) > 0);
	errno = 0;
	CHECK(opendir("/proc/self/task/999999") == NULL && errno == ENOENT);
	pthread_barrier_wait(&gate);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(settled_thread_count(1), 1);
}

/* ---- robust lists: a lock whose owner died ---- */

static void robust_owner_dies(void)
{
	pthread_mutex_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				  -1, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	CHECK_EQ(pthread_mutex_init(m, &a), 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* Locked, then the process ends without unlocking: the kernel
		 * walks the robust list at the thread's exit. */
		_exit(pthread_mutex_lock(m) == 0 ? 0 : 1);
	}
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(pthread_mutex_lock(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	munmap(m, 4096);
}

/* ---- posix_spawn (a vfork-style clone) from a thread ---- */

static void *spawn_here(void *arg)
{
	char *argv[] = { (char *)ut_self, "exec-child", NULL };
	pid_t pid;
	int *status = arg;
	*status = -1;
	if (posix_spawn(&pid, ut_self, NULL, NULL, argv, environ) == 0)
		waitpid(pid, status, 0);
	return NULL;
}

static void spawn_from_thread(void)
{
	pthread_t bg, sp;
	int status;
	background_stop = 0;
	CHECK_EQ(pthread_create(&bg, NULL, background, NULL), 0);
	CHECK_EQ(pthread_create(&sp, NULL, spawn_here, &status), 0);
	CHECK_EQ(pthread_join(sp, NULL), 0);
	background_stop = 1;
	CHECK_EQ(pthread_join(bg, NULL), 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 33);
}

/* ---- a faulting thread kills the process ---- */

static void *fault(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	*(volatile int *)UT_BADPTR = 1;
	return NULL;
}

static void faulting_thread_kills(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t a, b;
		pthread_create(&a, NULL, spin_forever, NULL);
		pthread_create(&b, NULL, fault, NULL);
		for (;;)
			pause();
	}
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st));
	CHECK_EQ(WTERMSIG(st), SIGSEGV);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec-child"))
		return exec_child();
	ut_init(argc, argv);
	create_join_many();
	threads_on_every_cpu();
	mutex_condvar_counter();
	tid_word_cleared();
	cpu_times();
	clone_einval();
	main_exits_first();
	exit_group_ends_all();
	fork_from_thread();
	exec_from_thread();
	faulting_thread_kills();
	robust_owner_dies();
	spawn_from_thread();
	proc_task_dir();
	return ut_done();
}
