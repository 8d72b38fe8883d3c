/*
 * ut_fuzz_bound.h: what keeps a fuzzing child bounded, and its signals
 * (ut_fuzz.c includes this once; a part of that program).
 *
 * A run may make any number of calls, so nothing the calls make may pile
 * up until the child's own checks fail (EMFILE, ENOMEM, ENOSPC):
 *
 *   - descriptors: every FD_PROBE_EVERY calls the lowest free descriptor
 *     is probed; past FD_BOUND (or none free) every descriptor but the
 *     trace's is closed, and every SWEEP_EVERY calls regardless;
 *   - children: a forked copy exits at once and SIGCHLD is ignored, so
 *     none stays a zombie; the sweep reaps any left all the same;
 *   - mappings: the fuzzing's own mappings are remembered in a ring; the
 *     one a new mapping pushes out is unmapped;
 *   - files and System V objects: every CLEAN_EVERY calls the child's
 *     play directory is emptied and its IPC objects removed.
 *
 * Signals in the mix: the child catches SIGUSR1, SIGUSR2 and SIGALRM with
 * a counting handler (no SA_RESTART, so calls see EINTR), and two
 * pseudo-calls send them: raise_signal() (kill of itself with one of
 * those or an ignored signal) and arm_timer() (a one-shot or periodic
 * ITIMER_REAL of a few milliseconds).  The timer is stopped before the
 * child's final checks.
 *
 * Threads and futexes are in the mix through a third pseudo-call
 * (ut_fuzz_threads.h).
 */
#ifndef UT_FUZZ_BOUND_H
#define UT_FUZZ_BOUND_H

#include <dirent.h>
#include <sys/time.h>

#define FD_BOUND 48
#define FD_PROBE_EVERY 64
#define SWEEP_EVERY 4096
#define CLEAN_EVERY 16384

static char play_dir[256]; /* absolute: the child's own directory */
static volatile long signals_caught;

static int fd_limit(void)
{
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) != 0 || nofile.rlim_cur > 1024)
		return 1024;
	return (int)nofile.rlim_cur;
}

static void close_all_descriptors(void)
{
	int limit = fd_limit();
	for (int fd = 3; fd < limit; fd++)
		if (fd != trace_fd)
			close(fd);
	forget_fds();
}

static void bound_descriptors(long i)
{
	if (i % SWEEP_EVERY == SWEEP_EVERY - 1) {
		close_all_descriptors();
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		return;
	}
	int probe = open("/", O_RDONLY | O_CLOEXEC);
	if (probe >= 0)
		close(probe);
	if (probe < 0 || probe > FD_BOUND)
		close_all_descriptors();
}

/* Unmap the remembered mapping in ring slot k, if any. */
static void drop_map(int k)
{
	if (maps[k].len)
		munmap((void *)maps[k].addr, maps[k].len);
	maps[k].addr = maps[k].len = 0;
}

static void drop_all_maps(void)
{
	for (int k = 0; k < MAX_MAPS; k++)
		drop_map(k);
	nmaps = next_map = 0;
}

/* Remove everything under the directory open as dfd (closed here),
   making each directory writable and searchable first: the fuzzing may
   have chmod'ed it.  getdents64 itself, not opendir: no malloc here. */
static void empty_dir(int dfd, int depth)
{
	static char dents[8][4096];
	long n;
	while (depth < 8 && (n = syscall(SYS_getdents64, dfd, dents[depth],
					 sizeof dents[depth])) > 0) {
		for (long off = 0; off < n;) {
			struct dirent *d = (struct dirent *)(dents[depth] + off);
			off += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			if (unlinkat(dfd, d->d_name, 0) == 0)
				continue;
			fchmodat(dfd, d->d_name, 0700, 0);
			int sub = openat(dfd, d->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (sub >= 0)
				empty_dir(sub, depth + 1);
			unlinkat(dfd, d->d_name, AT_REMOVEDIR);
		}
	}
	close(dfd);
}

static void clean_play_dir(void)
{
	chmod(play_dir, 0755);
	if (chdir(play_dir) != 0)
		return;
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	if (dfd >= 0)
		empty_dir(dfd, 0);
	open_standard_files();
}

/* The periodic work after call i. */
static void keep_bounded(long i)
{
	if (i % FD_PROBE_EVERY == FD_PROBE_EVERY - 1)
		bound_descriptors(i);
	if (i % CLEAN_EVERY == CLEAN_EVERY - 1) {
		close_all_descriptors();
		drop_all_maps();
		remove_ipc_objects();
		clean_play_dir();
	}
}

static void on_signal(int sig)
{
	(void)sig;
	signals_caught++;
}

static void catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
}

/* Pseudo-calls: numbers no system call has, chosen like the others. */
#define PSEUDO_RAISE (-1L)
#define PSEUDO_TIMER (-2L)

static long raise_signal(pid_t me, long a0)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGPIPE,
				    SIGWINCH, SIGURG };
	return kill(me, sigs[(unsigned long)a0 % (sizeof sigs / sizeof sigs[0])]);
}

static long arm_timer(long a0)
{
	struct itimerval it;
	memset(&it, 0, sizeof it);
	it.it_value.tv_usec = 1000 + (long)((unsigned long)a0 % 5000);
	if ((unsigned long)a0 % 4 == 0)
		it.it_interval.tv_usec = 10000;
	return setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_timer(void)
{
	struct itimerval off;
	memset(&off, 0, sizeof off);
	setitimer(ITIMER_REAL, &off, NULL);
}

#endif
