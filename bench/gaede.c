/*
 * gaede -- the GAEDE multi-user workload (seed 001, issue 21): U scripted
 * users, each a distinct uid with a home of its own, each looping over a
 * mix of shell scripts with no think time, in the style of Gaede's scaling
 * technique and AIM III.
 *
 *     gaede -u USERS -t SECONDS [-s SCRIPTDIR] [-b BASEUID]
 *
 * User i (0-based) is /etc/passwd's "u01", "u02", ... (i + 1, two digits),
 * or with -b the entry whose uid is BASEUID + i; its home, uid and gid come
 * from that entry.  The parent forks one process per user; each sets its
 * groups, gid and uid, goes to its home and waits on a pipe until every
 * user exists, then the parent closes the pipe and all start together.
 *
 * A user runs the scripts of SCRIPTDIR (every "*.sh" there, in name order;
 * default /bench/gaede_scripts), user i starting at script i mod n so that the
 * users are spread over the mix, each under /bin/bash (or /bin/sh when
 * there is no bash) in its home, with HOME, USER, LOGNAME, PATH, LC_ALL=C,
 * TMPDIR=$HOME/tmp and GAEDE_USER=i in its environment, standard input
 * from /dev/null, standard output to /dev/null and standard error to
 * $HOME/gaede.err.  A script that exits 0 counts as finished; any other
 * end counts as failed (the first failure of each user is told on
 * standard error with the first line of gaede.err).  At the deadline the
 * script running then is killed (it runs in a process group of its own)
 * and counts as neither: only whole scripts finished in the time count.
 *
 * The result, one line on standard output:
 *
 *     bench gaede users=U scripts=N scripts_per_hour=X elapsed_s=S
 *           failed=F scripts_min=A scripts_max=B mix=M
 *
 * N finished scripts over all users in S seconds (from the start to the
 * end of the last user), X = N * 3600 / S, F failed scripts, A and B the
 * fewest and most scripts one user finished, M the number of scripts in
 * the mix.  When no script finished, "bench gaede error=WHAT ..." and exit
 * status 1; usage errors exit with status 2.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_USERS 256
#define MAX_SCRIPTS 32
#define DEFAULT_SCRIPTS "/bench/gaede_scripts"
#define TICK_US 250000                  /* how often a user looks at the clock */

struct user {
	char name[32];
	char home[256];
	uid_t uid;
	gid_t gid;
	pid_t pid;
	long finished;
	long failed;
};

/* What a user process sends its parent when its time is up. */
struct tally {
	int index;
	long finished;
	long failed;
};

static struct user users[MAX_USERS];
static char *scripts[MAX_SCRIPTS];
static int nscripts;
static const char *shell = "/bin/bash";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gaede -u USERS -t SECONDS [-s SCRIPTDIR] [-b BASEUID]\n"
		   "  USERS 1..%d scripted users (passwd's u01.., or uids BASEUID..)\n"
		   "  SECONDS the time each user loops over the scripts\n"
		   "  SCRIPTDIR the *.sh scripts of the mix (default %s)\n",
		MAX_USERS, DEFAULT_SCRIPTS);
}

static void usage_error(const char *why)
{
	fprintf(stderr, "gaede: %s\n", why);
	usage(stderr);
	exit(2);
}

/* The one error line of the result, then exit status 1. */
static void __attribute__((noreturn)) fail(const char *what, const char *detail, int err)
{
	printf("bench gaede error=%s", what);
	if (detail)
		printf(" what=%s", detail);
	if (err)
		printf(" errno=%d", err);
	printf("\n");
	fflush(stdout);
	exit(1);
}

static long number_arg(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < lo || v > hi) {
		char why[128];
		snprintf(why, sizeof why, "%s must be a number %ld..%ld", what, lo, hi);
		usage_error(why);
	}
	return v;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fills scripts[] with the *.sh files of dir, in name order. */
static void find_scripts(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		fail("scripts", dir, errno);
	while ((e = readdir(d)) && nscripts < MAX_SCRIPTS) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".sh") != 0)
			continue;
		if (asprintf(&scripts[nscripts], "%s/%s", dir, e->d_name) < 0)
			fail("memory", NULL, ENOMEM);
		nscripts++;
	}
	closedir(d);
	if (nscripts == 0)
		fail("no_scripts", dir, 0);
	qsort(scripts, nscripts, sizeof scripts[0], by_name);
}

/* Fills users[0..n-1] from /etc/passwd. */
static void find_users(int n, long base_uid)
{
	for (int i = 0; i < n; i++) {
		char name[32];
		struct passwd *pw;

		snprintf(name, sizeof name, "u%02d", i + 1);
		pw = base_uid >= 0 ? getpwuid(base_uid + i) : getpwnam(name);
		if (!pw) {
			if (base_uid >= 0)
				snprintf(name, sizeof name, "uid%ld", base_uid + i);
			fail("no_user", name, 0);
		}
		snprintf(users[i].name, sizeof users[i].name, "%s", pw->pw_name);
		snprintf(users[i].home, sizeof users[i].home, "%s", pw->pw_dir);
		users[i].uid = pw->pw_uid;
		users[i].gid = pw->pw_gid;
	}
}

/* In the user's process: become the user, in its home.  0 or an errno. */
static int become(const struct user *u)
{
	if (geteuid() == 0) {
		setgroups(1, &u->gid);          /* best effort: not every kernel has it */
		if (setgid(u->gid) < 0 || setuid(u->uid) < 0)
			return errno;
	} else if (geteuid() != u->uid) {
		return EPERM;
	}
	return chdir(u->home) < 0 ? errno : 0;
}

/* In a script's process: the environment, the descriptors, the exec. */
static void __attribute__((noreturn)) exec_script(const struct user *u, int index, const char *script)
{
	char home[300], user[48], logname[48], tmpdir[300], idx[32];
	char *envp[] = { home, user, logname, tmpdir, idx,
			 "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LC_ALL=C",
			 "SHELL=/bin/sh", NULL };
	char *argv[] = { (char *)shell, (char *)script, NULL };
	int in = open("/dev/null", O_RDONLY);
	int out = open("/dev/null", O_WRONLY);
	int err = open("gaede.err", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	setpgid(0, 0);
	snprintf(home, sizeof home, "HOME=%s", u->home);
	snprintf(user, sizeof user, "USER=%s", u->name);
	snprintf(logname, sizeof logname, "LOGNAME=%s", u->name);
	snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s/tmp", u->home);
	snprintf(idx, sizeof idx, "GAEDE_USER=%d", index);
	if (in < 0 || out < 0 || err < 0)
		_exit(126);
	dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	execve(shell, argv, envp);
	_exit(127);
}

/* SIGALRM comes every TICK_US while a user runs: it interrupts waitpid so
 * that the deadline is seen within a tick, even when it passes between
 * the check and the wait. */
static void on_alarm(int sig)
{
	(void)sig;
}

/* Runs one script to its end or to the deadline: 1 finished, 0 failed,
 * -1 cut off at the deadline. */
static int run_script(const struct user *u, int index, const char *script, double deadline)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 0;
	if (pid == 0)
		exec_script(u, index, script);
	setpgid(pid, pid);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 0;
		if (now_s() >= deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
	}
	if (now_s() >= deadline)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Tells the first failure of a user, with the first line its script wrote. */
static void tell_failure(const struct user *u, const char *script)
{
	char line[200] = "";
	FILE *f = fopen("gaede.err", "r");

	if (f) {
		if (!fgets(line, sizeof line, f))
			line[0] = 0;
		fclose(f);
	}
	line[strcspn(line, "\n")] = 0;
	fprintf(stderr, "gaede: %s: %s failed: %s\n", u->name, strrchr(script, '/') + 1,
		line[0] ? line : "(no message)");
}

/* The user's loop over the mix until the deadline. */
static struct tally user_loop(const struct user *u, int index, double seconds)
{
	struct tally t = { index, 0, 0 };
	struct sigaction sa;
	struct itimerval tick = { { 0, TICK_US }, { 0, TICK_US } };
	double deadline = now_s() + seconds;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;               /* no SA_RESTART: waitpid sees EINTR */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &tick, NULL);    /* not inherited by the scripts */
	for (int k = index % nscripts; now_s() < deadline; k = (k + 1) % nscripts) {
		int r = run_script(u, index, scripts[k], deadline);
		if (r > 0)
			t.finished++;
		if (r == 0 && t.failed++ == 0)
			tell_failure(u, scripts[k]);
	}
	memset(&tick, 0, sizeof tick);
	setitimer(ITIMER_REAL, &tick, NULL);
	return t;
}

/* User process i: become the user, wait for the start, loop, report. */
static void __attribute__((noreturn)) user_main(int i, int go, int report, double seconds)
{
	struct tally t = { i, 0, -1 };
	char c;
	int err = become(&users[i]);

	if (err)
		fprintf(stderr, "gaede: %s: cannot become uid %d in %s: %s\n", users[i].name,
			(int)users[i].uid, users[i].home, strerror(err));
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	if (!err)
		t = user_loop(&users[i], i, seconds);
	if (write(report, &t, sizeof t) != sizeof t)
		_exit(1);
	_exit(0);
}

/* Reads the users' tallies (each one write, smaller than PIPE_BUF); the
 * number of users that could not become their uid in their home, and in
 * *lost the number that ended without a tally. */
static int collect(int report, int n, int *lost)
{
	struct tally t;
	int got = 0, broken = 0;

	while (got < n) {
		ssize_t r = read(report, &t, sizeof t);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != sizeof t)
			break;
		if (t.index < 0 || t.index >= n)
			continue;
		users[t.index].finished = t.finished;
		users[t.index].failed = t.failed;
		broken += t.failed < 0;
		got++;
	}
	*lost = n - got;
	return broken;
}

static void start_users(int n, double seconds, int *report_out)
{
	int go[2], report[2];

	if (pipe(go) < 0 || pipe(report) < 0)
		fail("pipe", NULL, errno);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			fail("fork", NULL, errno);
		if (pid == 0) {
			close(go[1]);
			close(report[0]);
			user_main(i, go[0], report[1], seconds);
		}
		users[i].pid = pid;
	}
	close(go[0]);
	close(report[1]);
	close(go[1]);                           /* every user reads end of file: go */
	*report_out = report[0];
}

static void print_result(int n, double elapsed)
{
	long total = 0, failed = 0, lo = -1, hi = 0;

	for (int i = 0; i < n; i++) {
		total += users[i].finished;
		failed += users[i].failed;
		if (lo < 0 || users[i].finished < lo)
			lo = users[i].finished;
		if (users[i].finished > hi)
			hi = users[i].finished;
	}
	if (total == 0) {
		printf("bench gaede error=%s users=%d scripts=0 failed=%ld elapsed_s=%.2f\n",
		       failed ? "all_failed" : "none_finished", n, failed, elapsed);
		exit(1);
	}
	printf("bench gaede users=%d scripts=%ld scripts_per_hour=%.1f elapsed_s=%.2f "
	       "failed=%ld scripts_min=%ld scripts_max=%ld mix=%d\n",
	       n, total, total * 3600.0 / elapsed, elapsed, failed, lo, hi, nscripts);
}

int main(int argc, char **argv)
{
	const char *dir = DEFAULT_SCRIPTS;
	long n = -1, seconds = -1, base_uid = -1;
	int report;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (a[0] != '-' || !a[1] || !strchr("utsb", a[1]) || a[2])
			usage_error("unknown argument");
		if (i + 1 >= argc)
			usage_error("an option lacks its value");
		const char *v = argv[++i];
		if (a[1] == 'u')
			n = number_arg(v, 1, MAX_USERS, "USERS");
		else if (a[1] == 't')
			seconds = number_arg(v, 1, 86400, "SECONDS");
		else if (a[1] == 'b')
			base_uid = number_arg(v, 0, 60000, "BASEUID");
		else
			dir = v;
	}
	if (n < 0 || seconds < 0)
		usage_error("-u USERS and -t SECONDS are needed");
	if (access(shell, X_OK) != 0)
		shell = "/bin/sh";
	find_scripts(dir);
	find_users(n, base_uid);
	fflush(stdout);
	double start = now_s();
	start_users(n, seconds, &report);
	int lost, broken = collect(report, n, &lost);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	double elapsed = now_s() - start;
	if (broken)
		fail("user", "cannot_become_user", 0);
	if (lost)
		fail("user", "ended_without_tally", 0);
	print_result(n, elapsed);
	return 0;
}
