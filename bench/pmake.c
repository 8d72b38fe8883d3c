/*
 * pmake -- Sprite's pmake and pmakeInd (seed 003, section 5.1): a parallel
 * make of a real program's sources, timed.
 *
 *     pmake [-j JOBS] [-C DIR]
 *     pmakeind [-n COPIES] [-j JOBS] [-C DIR]     (or pmake -n COPIES ...)
 *
 * pmake runs Debian's `make -j JOBS` in DIR (default the current
 * directory; JOBS defaults to two per online processor, as Sprite ran two
 * compilations per processor) and prints one line:
 *
 *     bench pmake jobs=N files=F objects=O cpus=P elapsed_s=S status=0
 *
 * pmakeind (the program called by that name, or given -n) runs COPIES
 * makes at once (default one per online processor), make i in DIR/cI,
 * each on its own copy of the sources with `make -j JOBS` (default 2):
 *
 *     bench pmakeind copies=C jobs=N files=F objects=O cpus=P elapsed_s=S status=0
 *
 * F is the number of C files of one copy, O the objects of all copies
 * after the make (every .o is removed before the clock starts, so each
 * run compiles everything), S the seconds from starting the first make to
 * the end of the last (wall clock, CLOCK_MONOTONIC).  Each make's output
 * goes to make.log in its directory.  The Makefile is the caller's (the
 * harness generates one compiling each .c to a .o, no link).
 *
 * A failure is one line "bench pmake error=WHAT ..." (or "bench pmakeind
 * ...") followed by the end of the failing make's log, and exit status 1:
 * error=usage, no_makefile, fork, make (a make exited non-zero; status= its
 * status), objects (fewer objects than C files).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_COPIES 64

static const char *name = "pmake";

struct tree_count {
	long c_files;
	long objects;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: pmake [-j JOBS] [-C DIR]\n"
		   "       pmakeind [-n COPIES] [-j JOBS] [-C DIR]   (or pmake -n COPIES)\n"
		   "Times Debian's make -j JOBS in DIR (pmake; JOBS defaults to 2 per CPU),\n"
		   "or COPIES makes at once in DIR/c0, DIR/c1 ... (pmakeind; COPIES\n"
		   "defaults to one per CPU, JOBS to 2), every .o removed first, and\n"
		   "prints one line: bench pmake jobs=N files=F objects=O cpus=P elapsed_s=S status=0\n");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/*
 * Counts the C files and objects under dir; with remove set, deletes the
 * objects instead of counting them.
 */
static void walk(const char *dir, int remove, struct tree_count *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(path, remove, count);
		} else if (ends_with(e->d_name, ".c")) {
			count->c_files++;
		} else if (ends_with(e->d_name, ".o")) {
			if (remove)
				unlink(path);
			else
				count->objects++;
		}
	}
	closedir(d);
}

/* Prints the last lines of dir/make.log after a failure. */
static void show_log_tail(const char *dir)
{
	char path[PATH_MAX], line[512];
	char tail[8][512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/make.log", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		memcpy(tail[n % 8], line, sizeof line);
		n++;
	}
	fclose(f);
	for (int i = n > 8 ? n - 8 : 0; i < n; i++)
		printf("  %s", tail[i % 8]);
}

/* Starts `make -j jobs` in dir with its output in dir/make.log. */
static pid_t start_make(const char *dir, int jobs)
{
	char jarg[32], log[PATH_MAX];
	pid_t pid;

	snprintf(jarg, sizeof jarg, "-j%d", jobs);
	snprintf(log, sizeof log, "%s/make.log", dir);
	fflush(stdout);
	pid = fork();
	if (pid != 0)
		return pid;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || chdir(dir) != 0)
		_exit(126);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	execlp("make", "make", jarg, (char *)NULL);
	dprintf(2, "pmake: cannot run make: %s\n", strerror(errno));
	_exit(127);
}

static int has_makefile(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/Makefile", dir);
	return access(path, R_OK) == 0;
}

static int fail(const char *what, const char *dir)
{
	printf("bench %s error=%s dir=%s\n", name, what, dir);
	return 1;
}

static int positive(const char *s, int max)
{
	char *end;
	long v = strtol(s, &end, 10);

	return (*s && !*end && v >= 1 && v <= max) ? (int)v : 0;
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	const char *top = ".";
	int jobs = 0, copies = 0, ind, opt;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char dirs[MAX_COPIES][PATH_MAX];
	pid_t pids[MAX_COPIES];

	base = base ? base + 1 : argv[0];
	ind = strcmp(base, "pmakeind") == 0;
	if (ind)
		name = "pmakeind";
	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	while ((opt = getopt(argc, argv, "j:C:n:h")) != -1) {
		switch (opt) {
		case 'j': jobs = positive(optarg, 1024); if (!jobs) goto bad; break;
		case 'n':
			ind = 1;
			name = "pmakeind";
			copies = positive(optarg, MAX_COPIES);
			if (!copies)
				goto bad;
			break;
		case 'C': top = optarg; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind != argc)
		goto bad;
	if (cpus < 1)
		cpus = 1;
	if (!jobs)
		jobs = ind ? 2 : 2 * (int)cpus;
	if (!ind)
		copies = 1;
	else if (!copies)
		copies = cpus > MAX_COPIES ? MAX_COPIES : (int)cpus;

	struct tree_count count = {0, 0};
	for (int i = 0; i < copies; i++) {
		if (ind)
			snprintf(dirs[i], PATH_MAX, "%s/c%d", top, i);
		else
			snprintf(dirs[i], PATH_MAX, "%s", top);
		if (!has_makefile(dirs[i]))
			return fail("no_makefile", dirs[i]);
		struct tree_count one = {0, 0};
		walk(dirs[i], 1, &one);
		if (i == 0)
			count.c_files = one.c_files;
	}

	double start = now_s();
	for (int i = 0; i < copies; i++) {
		pids[i] = start_make(dirs[i], jobs);
		if (pids[i] < 0)
			return fail("fork", dirs[i]);
	}
	int worst = 0, worst_copy = 0;
	for (int i = 0; i < copies; i++) {
		int st = 0;
		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (code && !worst) {
			worst = code;
			worst_copy = i;
		}
	}
	double elapsed = now_s() - start;

	for (int i = 0; i < copies; i++) {
		struct tree_count after = {0, 0};
		walk(dirs[i], 0, &after);
		count.objects += after.objects;
	}
	if (worst) {
		printf("bench %s error=make status=%d dir=%s elapsed_s=%.2f\n", name, worst,
		       dirs[worst_copy], elapsed);
		show_log_tail(dirs[worst_copy]);
		return 1;
	}
	if (count.objects < count.c_files * copies) {
		printf("bench %s error=objects objects=%ld files=%ld copies=%d\n", name,
		       count.objects, count.c_files, copies);
		return 1;
	}
	if (ind)
		printf("bench pmakeind copies=%d jobs=%d files=%ld objects=%ld cpus=%ld "
		       "elapsed_s=%.2f status=0\n", copies, jobs, count.c_files, count.objects,
		       cpus, elapsed);
	else
		printf("bench pmake jobs=%d files=%ld objects=%ld cpus=%ld elapsed_s=%.2f status=0\n",
		       jobs, count.c_files, count.objects, cpus, elapsed);
	return 0;

bad:
	usage(stderr);
	printf("bench %s error=usage\n", name);
	return 1;
}
