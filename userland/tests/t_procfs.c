/*
 * t_procfs: the /proc files, in Linux's formats, against what the system
 * calls say of the same things.
 *
 * /proc/self and /proc/PID/{stat,status,cmdline,comm,cwd,exe,fd/,maps}
 * (cmdline also after the program retitles itself, as nginx does)
 * for this program and for a child it stops, lets go and reaps (a
 * directory held open across the reaping: ENOENT, ESRCH); readdir's inode
 * numbers; fd/N, cwd and exe leading to the file itself (a pipe reopened
 * at both ends, an unlinked file);
 * /proc/{uptime,loadavg,stat,meminfo,cpuinfo,mounts,filesystems,
 * diskstats,partitions} against sysinfo, clock_gettime and
 * sched_getaffinity; Tempest's own options and lockstat (not on Linux);
 * /proc/sysvipc/{shm,sem,msg} listing an object of each kind made here
 * and forgetting it once removed; sysinfo's own arguments.  Runs on the
 * host's Linux too (which must have /proc mounted, as it does), so each
 * format is Linux's.
 */
#include "ut.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char text[65536];

/* A whole /proc file into text (NUL-terminated): its length, or -1. */
static long slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	long n = 0, r;
	while (n < (long)sizeof text - 1 && (r = read(fd, text + n, sizeof text - 1 - n)) > 0)
		n += r;
	close(fd);
	text[n] = 0;
	return n;
}

/* The line of text starting with prefix, or NULL. */
static const char *line_with(const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		if (strncmp(l, prefix, n) == 0)
			return l;
	return NULL;
}

static int count_lines_with(const char *prefix)
{
	int c = 0;
	size_t n = strlen(prefix);
	for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		c += strncmp(l, prefix, n) == 0;
	return c;
}

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int online_cpus(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

/* Fields of /proc/PID/stat after the command: fields[3] is field 3 (state). */
struct stat_fields {
	char comm[64];
	char state;
	long f[53];
};

static int parse_stat(const char *path, struct stat_fields *sf)
{
	if (slurp(path) < 0)
		return -1;
	char *open_paren = strchr(text, '('), *close_paren = strrchr(text, ')');
	if (!open_paren || !close_paren)
		return -1;
	size_t n = (size_t)(close_paren - open_paren - 1);
	snprintf(sf->comm, sizeof sf->comm, "%.*s", (int)n, open_paren + 1);
	sf->f[1] = atol(text);
	sf->state = close_paren[2];
	char *p = close_paren + 3;
	int i = 4;
	for (; i <= 52 && *p; i++) {
		sf->f[i] = strtol(p, &p, 10);
		while (*p == ' ')
			p++;
	}
	return i - 1;
}

static void test_self(int argc, char **argv)
{
	char link[256];
	long n = CHECK_OK(readlink("/proc/self", link, sizeof link - 1));
	if (n > 0) {
		link[n] = 0;
		CHECK_EQ(atoi(link), getpid());
	}
	struct stat_fields sf;
	CHECK_EQ(parse_stat("/proc/self/stat", &sf), 52);
	CHECK_EQ(sf.f[1], getpid());
	CHECK_EQ(sf.state, 'R');
	CHECK_EQ(sf.f[4], getppid());
	CHECK_EQ(sf.f[5], getpgrp());
	CHECK_EQ(sf.f[6], getsid(0));
	CHECK_EQ(sf.f[20], 1);                          /* threads */
	/* a terminal and its foreground group, or neither */
	CHECK(sf.f[7] == 0 ? sf.f[8] == -1 : sf.f[8] > 0);
	CHECK(sf.f[23] > 0);                            /* vsize */
	CHECK(sf.f[24] >= 0);                           /* rss */
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	CHECK(strncmp(sf.comm, base, 15) == 0);
	/* comm, and status's Name, are the same */
	CHECK(slurp("/proc/self/comm") > 0);
	char comm_line[80];
	snprintf(comm_line, sizeof comm_line, "%s\n", sf.comm);
	CHECK(strcmp(text, comm_line) == 0);

	CHECK(slurp("/proc/self/status") > 0);
	char want[96];
	snprintf(want, sizeof want, "Name:\t%s\n", sf.comm);
	CHECK(line_with(want) != NULL);
	snprintf(want, sizeof want, "Pid:\t%d\n", getpid());
	CHECK(line_with(want) != NULL);
	snprintf(want, sizeof want, "PPid:\t%d\n", getppid());
	CHECK(line_with(want) != NULL);
	snprintf(want, sizeof want, "Uid:\t%d\t%d\t", getuid(), geteuid());
	CHECK(line_with(want) != NULL);
	CHECK(line_with("State:\tR (running)") != NULL);
	/* the sizes of stat and status agree (within what this program may
	 * have touched in between) */
	const char *vm = line_with("VmSize:"), *rss = line_with("VmRSS:");
	CHECK(vm && rss);
	if (vm && rss) {
		long vm_kb = atol(vm + 7), rss_kb = atol(rss + 6);
		CHECK(labs(vm_kb - sf.f[23] / 1024) <= 256);
		CHECK(labs(rss_kb - sf.f[24] * 4) <= 256);
	}

	/* cmdline: the arguments, each ended by a NUL */
	long len = slurp("/proc/self/cmdline");
	long expect = 0;
	for (int i = 0; i < argc; i++)
		expect += (long)strlen(argv[i]) + 1;
	CHECK_EQ(len, expect);
	CHECK(strcmp(text, argv[0]) == 0);

	/* cwd follows chdir */
	char cwd[256];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	n = readlink("/proc/self/cwd", link, sizeof link - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		CHECK(strcmp(link, cwd) == 0);
	}
	/* exe names this program's file */
	struct stat a, b;
	CHECK_OK(stat("/proc/self/exe", &a));
	n = readlink("/proc/self/exe", link, sizeof link - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		CHECK_OK(stat(link, &b));
		CHECK_EQ(a.st_ino, b.st_ino);
		CHECK(link[0] == '/');
	}
}

/* readdir's inode numbers are the entries' own (ls -i, find). */
static void test_inodes(void)
{
	char dirpath[32];
	snprintf(dirpath, sizeof dirpath, "/proc/%d", getpid());
	DIR *d = opendir(dirpath);
	CHECK(d != NULL);
	int checked = 0, same = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (strcmp(e->d_name, "stat") && strcmp(e->d_name, "cmdline") && strcmp(e->d_name, "fd") &&
		    strcmp(e->d_name, "exe"))
			continue;
		char path[300];
		snprintf(path, sizeof path, "%s/%s", dirpath, e->d_name);
		struct stat st;
		checked++;
		same += lstat(path, &st) == 0 && st.st_ino == e->d_ino;
	}
	if (d)
		closedir(d);
	CHECK_EQ(checked, 4);
	CHECK_EQ(same, checked);
}

static void test_fds(void)
{
	int p[2];
	CHECK_OK(pipe(p));
	char path[64], link[128];
	snprintf(path, sizeof path, "/proc/self/fd/%d", p[0]);
	long n = readlink(path, link, sizeof link - 1);
	CHECK(n > 6);
	if (n > 0) {
		link[n] = 0;
		CHECK(strncmp(link, "pipe:[", 6) == 0);
	}
	int d = CHECK_OK(open("/", O_RDONLY | O_DIRECTORY));
	snprintf(path, sizeof path, "/proc/self/fd/%d", d);
	n = readlink(path, link, sizeof link - 1);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && link[0] == '/');
	/* the directory lists 0..2 and the new ones */
	DIR *dir = opendir("/proc/self/fd");
	CHECK(dir != NULL);
	int seen = 0;
	for (struct dirent *e; dir && (e = readdir(dir));) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && (fd == p[0] || fd == p[1] || fd == d))
			seen++;
	}
	if (dir)
		closedir(dir);
	CHECK_EQ(seen, 3);
	/* any directory offset will do, the wildest too */
	dir = opendir("/proc/self/fd");
	if (dir) {
		seekdir(dir, 0x7fffffff);
		CHECK(readdir(dir) == NULL);
		seekdir(dir, -5);
		readdir(dir);
		closedir(dir);
	}
	close(p[0]);
	close(p[1]);
	close(d);
	snprintf(path, sizeof path, "/proc/self/fd/%d", d);
	CHECK_ERR(readlink(path, link, sizeof link), ENOENT);
}

/* fd/N, cwd and exe lead to the file itself: a pipe opens through them,
 * each end counted (the write end closed twice before the reader sees its
 * end), and so does a file whose name is gone. */
static void test_magic_links(void)
{
	int p[2], fd;
	CHECK_OK(pipe(p));
	char path[64], buf[8];
	snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
	int w = CHECK_OK(open(path, O_WRONLY));
	snprintf(path, sizeof path, "/proc/self/fd/%d", p[0]);
	int r = CHECK_OK(open(path, O_RDONLY));
	CHECK_EQ(write(p[1], "ab", 2), 2);
	CHECK_EQ(read(r, buf, sizeof buf), 2);
	close(p[1]);
	CHECK_EQ(write(w, "c", 1), 1);          /* a writer is left */
	close(w);
	CHECK_EQ(read(p[0], buf, sizeof buf), 1);
	CHECK_EQ(read(p[0], buf, sizeof buf), 0);  /* and now none */
	close(p[0]);
	close(r);

	/* a file's link is its path (on Tempest: when the name cache still
	 * holds its name, else its inode) */
	CHECK_OK(ut_write_file("named", "x", 1, 0600));
	fd = CHECK_OK(open("named", O_RDONLY));
	char cwd[200], want[256], link[256];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	snprintf(want, sizeof want, "%s/named", cwd);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	long n = readlink(path, link, sizeof link - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		CHECK(strcmp(link, want) == 0 || strncmp(link, "inode:[", 7) == 0);
		if (strcmp(link, want) != 0)
			ut_note("fd link of a file: %s", link);
	}
	struct stat ls;
	CHECK_OK(lstat(path, &ls));
	CHECK_EQ(ls.st_mode & 0777, 0500);              /* read-only: r-x */
	close(fd);

	CHECK_OK(ut_write_file("gone", "hidden", 6, 0600));
	fd = CHECK_OK(open("gone", O_RDONLY));
	CHECK_OK(unlink("gone"));
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int again = CHECK_OK(open(path, O_RDONLY));
	memset(buf, 0, sizeof buf);
	CHECK_EQ(read(again, buf, sizeof buf), 6);
	CHECK(memcmp(buf, "hidden", 6) == 0);
	close(again);
	close(fd);

	struct stat a, b;
	CHECK_OK(stat("/proc/self/cwd/.", &a));
	CHECK_OK(stat(".", &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_dev, b.st_dev);
}

/* Does a line of maps cover addr with these permissions (e.g. "r-x")? */
static const char *map_of(unsigned long addr)
{
	for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		unsigned long lo, hi;
		if (sscanf(l, "%lx-%lx", &lo, &hi) == 2 && lo <= addr && addr < hi)
			return l;
	}
	return NULL;
}

static void test_maps(void)
{
	int on_stack = 1;
	CHECK(slurp("/proc/self/maps") > 0);
	const char *code = map_of((unsigned long)&test_maps);
	CHECK(code && strncmp(strchr(code, ' ') + 1, "r-xp", 4) == 0);
	const char *stack = map_of((unsigned long)&on_stack);
	CHECK(stack && strncmp(strchr(stack, ' ') + 1, "rw-p", 4) == 0);
	CHECK(stack && strstr(stack, "[stack]") != NULL && strstr(stack, "[stack]") < strchr(stack, '\n'));
	CHECK(map_of(0x1000) == NULL);
}

/* A child that sleeps in pause: S, then T when stopped, Z before it is
 * reaped, and gone after. */
static void test_child(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	struct stat_fields sf;
	double end = now_mono() + 5;
	do {
		parse_stat(path, &sf);
	} while (sf.state != 'S' && now_mono() < end);
	CHECK_EQ(sf.state, 'S');
	CHECK_EQ(sf.f[4], getpid());
	kill(pid, SIGSTOP);
	int st;
	CHECK_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CHECK_EQ(parse_stat(path, &sf), 52);
	CHECK_EQ(sf.state, 'T');
	kill(pid, SIGKILL);
	siginfo_t si;
	CHECK_OK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	CHECK_EQ(parse_stat(path, &sf), 52);
	CHECK_EQ(sf.state, 'Z');
	/* the root lists it until it is reaped */
	char name[16];
	snprintf(name, sizeof name, "%d", pid);
	int listed = 0, me = 0;
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d));) {
		listed += strcmp(e->d_name, name) == 0;
		me += atoi(e->d_name) == getpid();
	}
	if (d)
		closedir(d);
	CHECK_EQ(listed, 1);
	CHECK_EQ(me, 1);
	char dirpath[32];
	snprintf(dirpath, sizeof dirpath, "/proc/%d", pid);
	int dfd = CHECK_OK(open(dirpath, O_RDONLY | O_DIRECTORY));
	snprintf(dirpath, sizeof dirpath, "/proc/%d/stat", pid);
	int sfd = CHECK_OK(open(dirpath, O_RDONLY));
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	char dents[1024];
	CHECK_ERR(syscall(SYS_getdents64, dfd, dents, sizeof dents), ENOENT);
	CHECK_ERR(read(sfd, dents, sizeof dents), ESRCH);
	close(dfd);
	close(sfd);
	CHECK_ERR(open(path, O_RDONLY), ENOENT);
	snprintf(path, sizeof path, "/proc/%d", pid);
	struct stat sb;
	CHECK_ERR(stat(path, &sb), ENOENT);
	CHECK_ERR(open("/proc/0/stat", O_RDONLY), ENOENT);
	CHECK_ERR(open("/proc/nosuchfile", O_RDONLY), ENOENT);
}

/* Another user's process: its directory belongs to that user, and its
 * cwd link is not ours to read. */
static void other_user(void *arg)
{
	char path[64], link[64];
	snprintf(path, sizeof path, "/proc/%d/cwd", *(int *)arg);
	CHECK_ERR(readlink(path, link, sizeof link), EACCES);
	snprintf(path, sizeof path, "/proc/%d", *(int *)arg);
	struct stat sb;
	CHECK_OK(stat(path, &sb));
	CHECK_EQ(sb.st_uid, 0);
	CHECK_OK(stat("/proc/self/", &sb));
	CHECK_EQ(sb.st_uid, UT_NOBODY);
	CHECK_ERR(open("/proc/self/stat", O_WRONLY), EACCES);
}

static void test_system_files(void)
{
	struct sysinfo si;
	CHECK_OK(sysinfo(&si));
	/* uptime: seconds since boot, and idle time */
	double up = 0, idle = -1;
	CHECK(slurp("/proc/uptime") > 0);
	CHECK_EQ(sscanf(text, "%lf %lf", &up, &idle), 2);
	CHECK(up > 0 && idle >= 0);
	CHECK(up - now_mono() < 2 && now_mono() - up < 2);
	CHECK((long)si.uptime <= (long)up + 1 && (long)up <= (long)si.uptime + 1);

	/* loadavg: three averages, running/total, the last pid */
	double l1, l5, l15;
	int running, total, last;
	CHECK(slurp("/proc/loadavg") > 0);
	CHECK_EQ(sscanf(text, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &running, &total, &last), 6);
	CHECK(running >= 1 && total >= running && total >= 2 && last > 0);
	CHECK(l1 >= 0 && l1 < 1000 && l5 >= 0 && l15 >= 0);
	CHECK(l1 - si.loads[0] / 65536.0 < 0.1 && si.loads[0] / 65536.0 - l1 < 0.1);

	/* stat: the total and one line per online CPU, in ticks */
	int cpus = online_cpus();
	CHECK(slurp("/proc/stat") > 0);
	CHECK(strncmp(text, "cpu  ", 5) == 0);
	CHECK_EQ(count_lines_with("cpu") - 1, cpus);
	unsigned long u, n, s, i;
	CHECK_EQ(sscanf(text, "cpu %lu %lu %lu %lu", &u, &n, &s, &i), 4);
	CHECK(u + s + i > 0);
	const char *bt = line_with("btime ");
	CHECK(bt != NULL);
	if (bt) {
		long btime = atol(bt + 6);
		CHECK(labs(btime + (long)si.uptime - (long)time(NULL)) <= 2);
	}

	/* meminfo against sysinfo */
	CHECK(slurp("/proc/meminfo") > 0);
	const char *mt = line_with("MemTotal:"), *mf = line_with("MemFree:");
	CHECK(mt && mf && line_with("Buffers:") && line_with("Cached:") && line_with("SwapTotal:"));
	if (mt && mf) {
		unsigned long total_kb = strtoul(mt + 9, NULL, 10), free_kb = strtoul(mf + 8, NULL, 10);
		CHECK_EQ(total_kb, si.totalram / 1024 * si.mem_unit);
		CHECK(free_kb <= total_kb && free_kb > 0);
	}

	/* cpuinfo: one processor entry per online CPU */
	CHECK(slurp("/proc/cpuinfo") > 0);
	CHECK_EQ(count_lines_with("processor\t: "), cpus);

	/* mounts: the root and /proc itself */
	CHECK(slurp("/proc/mounts") > 0);
	CHECK(strstr(text, " / ") != NULL);
	CHECK(strstr(text, " /proc proc rw") != NULL);

	CHECK(slurp("/proc/filesystems") > 0);
	CHECK(strstr(text, "nodev\tproc\n") != NULL);

	/* diskstats: 14 fields at least on every line */
	CHECK(slurp("/proc/diskstats") >= 0);
	for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		unsigned maj, min;
		char name[32];
		unsigned long v[11];
		int got = sscanf(l, "%u %u %31s %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu", &maj, &min,
				 name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
				 &v[10]);
		CHECK_EQ(got, 14);
	}

	/* partitions: the header, then disks diskstats knows too */
	static char disks[65536];
	strcpy(disks, text);
	CHECK(slurp("/proc/partitions") > 0);
	CHECK(strncmp(text, "major minor  #blocks  name\n\n", 28) == 0);
	for (const char *l = strchr(text, '\n') + 2; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		unsigned maj, min;
		unsigned long kb;
		char name[32], want[48];
		CHECK_EQ(sscanf(l, "%u %u %lu %31s", &maj, &min, &kb, name), 4);
		snprintf(want, sizeof want, " %u %7u %s ", maj, min, name);
		CHECK(strstr(disks, want) != NULL);
	}

	CHECK(si.totalram >= si.freeram && si.freeram > 0 && si.mem_unit >= 1);
	CHECK(si.procs >= 2);
	CHECK_ERR(sysinfo(UT_BADPTR), EFAULT);
	CHECK_ERR(sysinfo(NULL), EFAULT);
}

/* The line of a /proc/sysvipc file for id, or NULL. */
static const char *ipc_line(const char *file, int id)
{
	if (slurp(file) < 0)
		return NULL;
	for (const char *l = strchr(text, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		int key, lid;
		if (sscanf(l + 1, "%d %d", &key, &lid) == 2 && lid == id)
			return l + 1;
	}
	return NULL;
}

static void test_sysvipc(void)
{
	key_t key = (key_t)(0x7d000000 | ((getpid() & 0xffff) << 4));
	int shm = CHECK_OK(shmget(key | 1, 40000, IPC_CREAT | IPC_EXCL | 0640));
	int sem = CHECK_OK(semget(key | 2, 3, IPC_CREAT | IPC_EXCL | 0600));
	int msg = CHECK_OK(msgget(key | 3, IPC_CREAT | IPC_EXCL | 0620));
	CHECK(slurp("/proc/sysvipc/shm") > 0 && strncmp(text, "       key      shmid perms", 27) == 0);
	const char *l = ipc_line("/proc/sysvipc/shm", shm);
	int k, id, perms;
	unsigned long size, nsems;
	CHECK(l && sscanf(l, "%d %d %o %lu", &k, &id, &perms, &size) == 4 && k == (key | 1) &&
	      perms == 0640 && size == 40000);
	l = ipc_line("/proc/sysvipc/sem", sem);
	CHECK(l && sscanf(l, "%d %d %o %lu", &k, &id, &perms, &nsems) == 4 && k == (key | 2) &&
	      perms == 0600 && nsems == 3);
	struct { long type; char text[10]; } m = { 1, "123456789" };
	CHECK_OK(msgsnd(msg, &m, 10, 0));
	unsigned long cbytes, qnum;
	l = ipc_line("/proc/sysvipc/msg", msg);
	CHECK(l && sscanf(l, "%d %d %o %lu %lu", &k, &id, &perms, &cbytes, &qnum) == 5 &&
	      k == (key | 3) && perms == 0620 && cbytes == 10 && qnum == 1);
	shmctl(shm, IPC_RMID, NULL);
	semctl(sem, 0, IPC_RMID);
	msgctl(msg, IPC_RMID, NULL);
	CHECK(ipc_line("/proc/sysvipc/shm", shm) == NULL);
	CHECK(ipc_line("/proc/sysvipc/sem", sem) == NULL);
	CHECK(ipc_line("/proc/sysvipc/msg", msg) == NULL);
}

/* Tempest's own files (not on Linux): the boot options, and the lock
 * statistics with the process list's lock, which every fork takes. */
static void test_tempest_files(void)
{
	if (access("/proc/options", F_OK) != 0) {
		ut_note("no /proc/options (not Tempest): its own files left out");
		return;
	}
	CHECK(slurp("/proc/options") > 0);
	CHECK(strncmp(text, "lock=", 5) == 0 && strstr(text, " sched=") && text[strlen(text) - 1] == '\n');
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	ut_wait(pid);
	CHECK(slurp("/proc/lockstat") > 0);
	CHECK(strncmp(text, "class ", 6) == 0);
	const char *l = line_with("proc ");
	unsigned long hits = 0;
	char kind[16];
	CHECK(l && sscanf(l, "proc %15s %lu", kind, &hits) == 2 && hits > 0 && strcmp(kind, "mutex") == 0);
}

/* A program that writes a new title over its arguments (nginx, sendmail,
 * postgres) shows it in cmdline: the memory is read, not a copy; a title
 * that runs past the arguments into the environment is read to its NUL. */
struct args { int argc; char **argv; };

static void retitle(void *arg)
{
	struct args *a = arg;
	char *start = a->argv[0];
	char *end = a->argv[a->argc - 1] + strlen(a->argv[a->argc - 1]) + 1;
	size_t n = (size_t)(end - start);
	memset(start, 'x', n - 1);          /* same length: one long argument */
	long len = slurp("/proc/self/cmdline");
	CHECK_EQ(len, (long)n);
	CHECK(len > 0 && text[0] == 'x' && text[n - 2] == 'x');
	extern char **environ;
	char *env_end = end;
	for (char **e = environ; *e; e++)
		if (*e >= end && *e + strlen(*e) + 1 > env_end)
			env_end = *e + strlen(*e) + 1;
	size_t room = (size_t)(env_end - start);
	if (room < n + 8) {
		ut_note("no environment after the arguments to retitle into");
		return;
	}
	size_t title = n + (room - n) / 2;  /* past the arguments' end */
	memset(start, 't', title);
	start[title] = 0;
	len = slurp("/proc/self/cmdline");
	CHECK_EQ(len, (long)title + 1);     /* to the NUL, which is included */
	CHECK(len > 0 && text[title - 1] == 't');
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_self(argc, argv);
	test_inodes();
	test_fds();
	test_maps();
	ut_scratch();
	test_magic_links();
	test_child();
	int me = getpid();
	ut_unprivileged("other user", other_user, &me);
	test_system_files();
	struct args a = { argc, argv };
	ut_child("retitle", retitle, &a, 0);
	test_sysvipc();
	test_tempest_files();
	return ut_done();
}
