/*
 * t_lockstat: Tempest's lock statistics from user space.  The snapshot
 * call refuses a short buffer with the size it needs and copies nothing;
 * any user may read the statistics but only root may reset them (EPERM);
 * a System V semaphore set updated from every CPU at once makes its lock
 * class miss, and the top miss site the kernel names is the function
 * that takes that lock (ipc_lock_id, kern/ipc/ipc.c), for the class and
 * for the set's own lock (its most contended instance); `lockstat -k -j`
 * prints well-formed JSON that names the same site; `lockstat -h`
 * documents every option and column, and -l, -H and -P filter and add
 * what they say.
 *
 * On Linux the statistics calls do not exist: the test checks that they
 * give ENOSYS (a Tempest binary never runs another call there) and stops.
 *
 * `t_lockstat contend` only makes the contention (for lockstat to watch).
 */
#include "ut.h"

#include <ctype.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kern/abi/tempest_abi.h"

#define LOCKSTAT_BIN "/bin/lockstat"
#define CONTEND_SEMS 64         /* semaphores each semop looks at */
#define CONTEND_OPS 1000        /* semop calls by each CPU's child in a round */
#define CONTEND_ROUNDS 30       /* rounds at most, until the sem class misses */
#define CONTENDED_FN "ipc_lock_id"

/* ---- CPUs ---- */

static int online_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 1;
	return CPU_COUNT(&set);
}

static void pin_to_nth_cpu(int n)
{
	cpu_set_t all, one;
	if (sched_getaffinity(0, sizeof all, &all) != 0)
		return;
	for (int c = 0, seen = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all) || seen++ != n)
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		sched_setaffinity(0, sizeof one, &one);
		return;
	}
}

/* ---- Snapshots ---- */

static void *snapshot(size_t *len)
{
	size_t need = 0;
	for (int tries = 0; tries < 8; tries++) {
		syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, NULL, 0, &need);
		char *buf = malloc(need);
		if (!buf)
			return NULL;
		long r = syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, buf, need, &need);
		if (r >= 0) {
			*len = (size_t)r;
			return buf;
		}
		free(buf);
	}
	return NULL;
}

/* The snapshot's top miss site of class cls (inst 0), or of its instance
 * record inst - 1, or NULL. */
static const struct lockstat_site_rec *top_miss_site(const struct lockstat_snapshot_hdr *h,
						     const char *cls, uint32_t inst)
{
	const struct lockstat_class_rec *c = (const void *)(h + 1);
	const struct lockstat_inst_rec *in = (const void *)(c + h->nclasses);
	const struct lockstat_site_rec *s = (const void *)(in + h->ninst);
	const struct lockstat_site_rec *best = NULL;
	for (uint32_t i = 0; i < h->nsites; i++)
		if (s[i].what == LOCKSTAT_SITE_MISS && s[i].inst == inst && !strcmp(s[i].cls, cls) &&
		    (!best || s[i].count > best->count))
			best = &s[i];
	return best;
}

/* The index + 1 of class cls's most missed instance record, or 0. */
static uint32_t top_instance(const struct lockstat_snapshot_hdr *h, const char *cls)
{
	const struct lockstat_class_rec *c = (const void *)(h + 1);
	const struct lockstat_inst_rec *in = (const void *)(c + h->nclasses);
	uint32_t best = 0;
	for (uint32_t i = 0; i < h->ninst; i++)
		if (!strcmp(in[i].cls, cls) && in[i].misses > 0 &&
		    (!best || in[i].misses > in[best - 1].misses))
			best = i + 1;
	return best;
}

static const struct lockstat_class_rec *find_class(const struct lockstat_snapshot_hdr *h,
						   const char *cls)
{
	const struct lockstat_class_rec *c = (const void *)(h + 1);
	for (uint32_t i = 0; i < h->nclasses; i++)
		if (!strcmp(c[i].name, cls))
			return &c[i];
	return NULL;
}

static int starts_with_fn(const char *sym, const char *fn)
{
	size_t n = strlen(fn);
	return strncmp(sym, fn, n) == 0 && sym[n] == '+';
}

/* ---- The contention ---- */

/* The misses of lock class cls so far (0 when it is not found). */
static uint64_t class_misses(const char *cls)
{
	size_t len;
	void *snap = snapshot(&len);
	const struct lockstat_class_rec *c = snap ? find_class(snap, cls) : NULL;
	uint64_t misses = c ? c->misses : 0;
	free(snap);
	return misses;
}

/* One child per CPU, each reading all CONTEND_SEMS semaphores of set id
 * CONTEND_OPS times in one semop (wait-for-zero on zeros: never blocks,
 * and the whole array is looked at under the set's lock); 0 when all of
 * them did. */
static int contend_round(int id, int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			pin_to_nth_cpu(i);
			struct sembuf zero[CONTEND_SEMS];
			for (int k = 0; k < CONTEND_SEMS; k++)
				zero[k] = (struct sembuf){ (unsigned short)k, 0, IPC_NOWAIT };
			for (int k = 0; k < CONTEND_OPS; k++)
				if (semop(id, zero, CONTEND_SEMS) != 0)
					_exit(1);
			_exit(0);
		}
		bad |= pid < 0;
	}
	int status;
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return bad ? -1 : 0;
}

/* Rounds of contend_round until the set's lock class (sem) has missed, at
 * most CONTEND_ROUNDS of them: whether CPUs meet on the lock depends on how
 * the host runs them, so the test waits for it rather than count on it. */
static int contend_on(int id)
{
	int n = online_cpus(), bad = 0;
	uint64_t before = class_misses("sem");
	for (int r = 0; r < CONTEND_ROUNDS && !bad; r++) {
		bad = contend_round(id, n);
		if (n < 2 || class_misses("sem") > before)
			break;
	}
	return bad;
}

/* The same on a set of its own, removed after. */
static int contend(void)
{
	int id = semget(IPC_PRIVATE, CONTEND_SEMS, IPC_CREAT | 0600);
	if (id < 0)
		return -1;
	int bad = contend_on(id);
	semctl(id, 0, IPC_RMID);
	return bad;
}

/* ---- The checks ---- */

static void check_short_buffer(void)
{
	unsigned char small[64];
	size_t need = 0;
	memset(small, 0xA5, sizeof small);
	CHECK_ERR(syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, small, sizeof small, &need), ENOSPC);
	CHECK(need > sizeof small);
	int untouched = 1;
	for (size_t i = 0; i < sizeof small; i++)
		untouched &= small[i] == 0xA5;
	CHECK(untouched);
	CHECK_ERR(syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, NULL, 0, UT_BADPTR), EFAULT);
	size_t len;
	void *buf = snapshot(&len);
	CHECK(buf != NULL);
	if (buf) {
		const struct lockstat_snapshot_hdr *h = buf;
		CHECK_EQ(h->version, LOCKSTAT_VERSION);
		CHECK_EQ(len, sizeof *h + h->nclasses * sizeof(struct lockstat_class_rec) +
				      h->ninst * sizeof(struct lockstat_inst_rec) +
				      h->nsites * sizeof(struct lockstat_site_rec) +
				      h->npercpu * sizeof(struct lockstat_cpu_rec));
	}
	free(buf);
}

static void as_other_user(void *arg)
{
	(void)arg;
	CHECK_ERR(syscall(TEMPEST_SYS_LOCKSTAT_RESET), EPERM);
	size_t len;
	void *buf = snapshot(&len);
	CHECK(buf != NULL);     /* reading is for everyone */
	free(buf);
}

static void check_reset_permission(void)
{
	if (!ut_is_root()) {
		CHECK_ERR(syscall(TEMPEST_SYS_LOCKSTAT_RESET), EPERM);
		return;
	}
	CHECK_EQ(syscall(TEMPEST_SYS_LOCKSTAT_RESET), 0);
	ut_unprivileged("unprivileged reset", as_other_user, NULL);
}

static void check_contended_site(void)
{
	if (online_cpus() < 2) {
		ut_note("one CPU: no contention to attribute");
		return;
	}
	size_t len0, len1;
	void *before = snapshot(&len0);
	/* The set lives until the snapshot is taken: its lock is then one of
	 * the class's reported instances. */
	int id = semget(IPC_PRIVATE, CONTEND_SEMS, IPC_CREAT | 0600);
	CHECK(id >= 0);
	CHECK_EQ(id >= 0 ? contend_on(id) : -1, 0);
	void *after = snapshot(&len1);
	if (id >= 0)
		semctl(id, 0, IPC_RMID);
	CHECK(before && after);
	if (before && after) {
		const struct lockstat_class_rec *c0 = find_class(before, "sem");
		const struct lockstat_class_rec *c1 = find_class(after, "sem");
		CHECK(c0 && c1);
		if (c0 && c1)
			CHECK(c1->misses > c0->misses);
		const struct lockstat_site_rec *s = top_miss_site(after, "sem", 0);
		CHECK(s != NULL);
		if (s && !starts_with_fn(s->sym, CONTENDED_FN))
			ut_check(0, __FILE__, __LINE__, "top miss site of sem is %s, not %s",
				 s->sym, CONTENDED_FN);
		/* The contended set's own lock names the same site. */
		uint32_t top = top_instance(after, "sem");
		CHECK(top != 0);
		const struct lockstat_site_rec *own = top ? top_miss_site(after, "sem", top) : NULL;
		CHECK(own != NULL);
		if (own && !starts_with_fn(own->sym, CONTENDED_FN))
			ut_check(0, __FILE__, __LINE__, "top miss site of sem's top instance is %s, not %s",
				 own->sym, CONTENDED_FN);
	}
	free(before);
	free(after);
}

/* ---- A small JSON checker, for lockstat -j ---- */

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *json_value(const char *p, int depth);

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		p += *p == '\\' ? 2 : 1;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_number(const char *p)
{
	const char *start = p;
	if (*p == '-')
		p++;
	while (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
	       *p == '+' || *p == '-')
		p++;
	return p > start ? p : NULL;
}

/* The members of an object (open == '{') or the elements of an array. */
static const char *json_list(const char *p, char open, int depth)
{
	char close = open == '{' ? '}' : ']';
	p = ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (open == '{') {
			p = json_string(ws(p));
			if (!p || *(p = ws(p)) != ':')
				return NULL;
			p++;
		}
		p = json_value(ws(p), depth + 1);
		if (!p)
			return NULL;
		p = ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p, int depth)
{
	if (depth > 32)
		return NULL;
	p = ws(p);
	if (*p == '{' || *p == '[')
		return json_list(p, *p, depth);
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return json_number(p);
}

/* Whether text is exactly one JSON value. */
static int json_valid(const char *text)
{
	const char *end = json_value(text, 0);
	return end && *ws(end) == '\0';
}

/* The first "site" of class cls's "miss_sites" in lockstat's JSON, into
 * out; 0 when found. */
static int json_top_miss_site(const char *text, const char *cls, char *out, size_t n)
{
	char key[64];
	snprintf(key, sizeof key, "{\"class\": \"%s\"", cls);
	const char *p = strstr(text, key);
	const char *sites = p ? strstr(p, "\"miss_sites\": [") : NULL;
	if (!sites || strncmp(sites + 15, "{\"site\": \"", 10) != 0)
		return -1;
	const char *s = sites + 25, *e = strchr(s, '"');
	if (!e || (size_t)(e - s) >= n)
		return -1;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	return 0;
}

/* Run lockstat with argv (argv[0] "lockstat"); its output in buf, its
 * length, or -1 when it did not exit 0. */
static long run_tool(char *const argv[], char *buf, size_t n)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(LOCKSTAT_BIN, argv);
		_exit(127);
	}
	close(fds[1]);
	size_t got = 0;
	ssize_t r;
	while (got < n - 1 && (r = read(fds[0], buf + got, n - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	close(fds[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? (long)got : -1;
}

static void check_lockstat_json(void)
{
	if (access(LOCKSTAT_BIN, X_OK) != 0) {
		ut_note("no %s: the tool's JSON is not checked", LOCKSTAT_BIN);
		return;
	}
	static char out[1 << 17];
	char *argv[] = { "lockstat", "-k", "-j", "-c", "sem", (char *)ut_self, "contend", NULL };
	long n = run_tool(argv, out, sizeof out);
	CHECK(n > 0);
	if (n <= 0)
		return;
	if (!json_valid(out))
		ut_check(0, __FILE__, __LINE__, "lockstat -k -j printed no valid JSON: %.200s", out);
	if (online_cpus() < 2)
		return;
	char site[64];
	CHECK_EQ(json_top_miss_site(out, "sem", site, sizeof site), 0);
	if (!starts_with_fn(site, CONTENDED_FN))
		ut_check(0, __FILE__, __LINE__, "lockstat names %s, not %s", site, CONTENDED_FN);
}

/* Every class name in lockstat's JSON out contains pattern; how many. */
static int json_classes_matching(const char *out, const char *pattern, int *others)
{
	int n = 0;
	*others = 0;
	for (const char *p = out; (p = strstr(p, "{\"class\": \"")); p++) {
		const char *name = p + 11, *end = strchr(name, '"');
		if (!end)
			break;
		char cls[64];
		snprintf(cls, sizeof cls, "%.*s", (int)(end - name), name);
		if (strstr(cls, pattern))
			n++;
		else
			(*others)++;
	}
	return n;
}

/* The options beyond -k and -j: -h documents each of them and each
 * column, -l filters the classes by name, -H and -P add the histograms
 * and the per-CPU counts (in the text and in the JSON). */
static void check_lockstat_options(void)
{
	if (access(LOCKSTAT_BIN, X_OK) != 0)
		return;
	static char out[1 << 17];
	char *help[] = { "lockstat", "-h", NULL };
	CHECK(run_tool(help, out, sizeof out) > 0);
	static const char *const documented[] = { "-k ", "-H ", "-P ", "-i SECS", "-l PATTERN",
						  "-j ", "-c CLASS", "hits", "misses", "wait_us",
						  "maxwait_us", "hold_us", "time_us", "halts", "kicks" };
	for (size_t i = 0; i < sizeof documented / sizeof documented[0]; i++)
		if (!strstr(out, documented[i]))
			ut_check(0, __FILE__, __LINE__, "lockstat -h does not document %s", documented[i]);
	char *filtered[] = { "lockstat", "-j", "-H", "-P", "-n", "0", "-l", "se", NULL };
	CHECK(run_tool(filtered, out, sizeof out) > 0);
	CHECK(json_valid(out));
	int others, matching = json_classes_matching(out, "se", &others);
	if (online_cpus() >= 2)         /* sem missed (check_contended_site) */
		CHECK(matching > 0);
	CHECK_EQ(others, 0);
	CHECK(strstr(out, "\"wait_hist\": [") && strstr(out, "\"per_cpu\": ["));
	CHECK(strstr(out, "\"pv_halts\": ") && strstr(out, "\"pv_kicks\": "));
	char *text[] = { "lockstat", "-H", "-P", "-c", "sem", NULL };
	CHECK(run_tool(text, out, sizeof out) > 0);
	CHECK(strstr(out, "\nclass                 cpu ") != NULL);      /* -P's table */
	if (online_cpus() >= 2 && !strstr(out, "sem: wait time"))    /* -H: the misses' waits */
		ut_check(0, __FILE__, __LINE__, "lockstat -H -c sem has no wait histogram: %.300s",
			 out);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "contend"))
		return contend() == 0 ? 0 : 1;
	ut_init(argc, argv);
	size_t need = 0;
	if (syscall(TEMPEST_SYS_LOCKSTAT_SNAPSHOT, NULL, 0, &need) < 0 && errno == ENOSYS) {
		CHECK_ERR(syscall(TEMPEST_SYS_LOCKSTAT_RESET), ENOSYS);
		CHECK_ERR(syscall(TEMPEST_SYS_BLKSTAT_SNAPSHOT, NULL, 0, &need), ENOSYS);
		ut_note("not Tempest: the statistics calls are ENOSYS, as on any Linux");
		return ut_done();
	}
	check_short_buffer();
	check_reset_permission();
	check_contended_site();
	check_lockstat_json();
	check_lockstat_options();
	return ut_done();
}
