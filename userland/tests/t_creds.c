/*
 * t_creds: real, effective and saved ids, and supplementary groups.
 *
 * setresuid/getresuid and setresgid/getresgid (root sets anything, a user
 * only ids it already has), setreuid/setregid (including when the saved
 * id follows the effective one), setuid as a user (to the real or saved
 * id only), setgroups/getgroups (sorted, the size checks, a group that
 * opens a file), and exec of a set-user-id and set-group-id program (and
 * of a plain one, which copies the effective ids to the saved ones), with
 * AT_SECURE set when the set-id bits changed the ids or the effective ids
 * are not the real ones.
 * Each run of changes happens in a forked child; the parent stays root.
 */
#include "ut.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void check_res(uid_t r, uid_t e, uid_t s, int line)
{
	uid_t a = 99, b = 99, c = 99;
	int ok = getresuid(&a, &b, &c) == 0 && a == r && b == e && c == s;
	ut_check(ok, __FILE__, line, "uids are %u %u %u (want %u %u %u)", a, b, c, r, e,
		 s);
}

static void check_resg(gid_t r, gid_t e, gid_t s, int line)
{
	gid_t a = 99, b = 99, c = 99;
	int ok = getresgid(&a, &b, &c) == 0 && a == r && b == e && c == s;
	ut_check(ok, __FILE__, line, "gids are %u %u %u (want %u %u %u)", a, b, c, r, e,
		 s);
}

#define RES(r, e, s) check_res(r, e, s, __LINE__)
#define RESG(r, e, s) check_resg(r, e, s, __LINE__)

static void resuid_child(void *arg)
{
	RES(0, 0, 0);
	CHECK_OK(setresuid(1000, 1001, 1002));
	RES(1000, 1001, 1002);
	CHECK_EQ(getuid(), 1000);
	CHECK_EQ(geteuid(), 1001);
	/* No longer root: only the three ids we hold. */
	CHECK_ERR(setresuid(-1, 1003, -1), EPERM);
	CHECK_ERR(setresuid(0, -1, -1), EPERM);
	CHECK_ERR(setresuid(-1, -1, 0), EPERM);
	CHECK_OK(setresuid(-1, -1, -1));
	RES(1000, 1001, 1002);
	CHECK_OK(setresuid(1002, 1000, 1001));
	RES(1002, 1000, 1001);
	/* setuid as a user sets only the effective id: to the real or saved. */
	CHECK_OK(setuid(1001));
	RES(1002, 1001, 1001);
	CHECK_ERR(setuid(1000), EPERM);
	CHECK_ERR(syscall(SYS_getresuid, UT_BADPTR, UT_BADPTR, UT_BADPTR), EFAULT);
	uid_t x;
	CHECK_ERR(syscall(SYS_getresuid, &x, &x, UT_KERNPTR), EFAULT);
}

static void reuid_child(void *arg)
{
	CHECK_OK(setresuid(100, 200, 300));
	/* The effective id set to the real one: the saved id stays. */
	CHECK_OK(setreuid(-1, 100));
	RES(100, 100, 300);
	/* Set to anything else: the saved id follows it. */
	CHECK_OK(setreuid(-1, 300));
	RES(100, 300, 300);
	/* The real id may become the real or the effective id only. */
	CHECK_ERR(setreuid(200, -1), EPERM);
	CHECK_ERR(setreuid(-1, 200), EPERM);
	/* Setting the real id moves the saved id to the new effective one. */
	CHECK_OK(setreuid(300, 100));
	RES(300, 100, 100);
	CHECK_OK(setreuid(-1, -1));
	RES(300, 100, 100);
}

static void resgid_child(void *arg)
{
	RESG(0, 0, 0);
	CHECK_OK(setresgid(10, 20, 30));
	RESG(10, 20, 30);
	CHECK_EQ(getgid(), 10);
	CHECK_EQ(getegid(), 20);
	CHECK_OK(setregid(-1, 10));
	RESG(10, 10, 30);
	CHECK_OK(setregid(-1, 30));
	RESG(10, 30, 30);
	/* Give up root: the group calls then follow the same rules. */
	CHECK_OK(setresuid(1000, 1000, 1000));
	CHECK_ERR(setresgid(-1, 40, -1), EPERM);
	CHECK_ERR(setregid(20, -1), EPERM);
	CHECK_ERR(setgid(20), EPERM);
	CHECK_OK(setregid(30, 10));
	RESG(30, 10, 10);
	CHECK_OK(setgid(30));
	RESG(30, 30, 10);
	gid_t x;
	CHECK_ERR(syscall(SYS_getresgid, &x, UT_BADPTR, &x), EFAULT);
}

static void groups_child(void *arg)
{
	gid_t set[3] = { 30, 10, 20 }, got[8];
	CHECK_OK(setgroups(3, set));
	CHECK_EQ(getgroups(0, NULL), 3);
	CHECK_EQ(getgroups(8, got), 3);
	/* Kept in ascending order, as Linux keeps them. */
	CHECK(got[0] == 10 && got[1] == 20 && got[2] == 30);
	CHECK_ERR(getgroups(2, got), EINVAL);
	CHECK_ERR(syscall(SYS_setgroups, -1, set), EINVAL);
	CHECK_ERR(syscall(SYS_setgroups, 65537, set), EINVAL);
	CHECK_ERR(syscall(SYS_setgroups, 2, UT_BADPTR), EFAULT);
	CHECK_EQ(getgroups(0, NULL), 3); /* the failures changed nothing */
	CHECK_OK(setgroups(0, NULL));
	CHECK_EQ(getgroups(0, NULL), 0);

	/* A supplementary group opens a file its owner group may read. */
	CHECK_OK(ut_write_file("grp/secret", "g", 1, 0640));
	CHECK_OK(chown("grp/secret", 0, 777));
	CHECK_OK(chmod("grp/secret", 0640));
	gid_t g = 777;
	CHECK_OK(setgroups(1, &g));
	CHECK_OK(setgid(1500));
	CHECK_OK(setuid(1500));
	char c = 0;
	CHECK_EQ(ut_read_file("grp/secret", &c, 1), 1);
	CHECK_EQ(c, 'g');
	/* A user may not change its groups. */
	CHECK_ERR(setgroups(0, NULL), EPERM);
	CHECK_ERR(syscall(SYS_setgroups, -1, NULL), EPERM);
}

static void nogroup_child(void *arg)
{
	CHECK_OK(setgroups(0, NULL));
	CHECK_OK(setgid(1500));
	CHECK_OK(setuid(1500));
	char c;
	CHECK_ERR(open("grp/secret", O_RDONLY), EACCES);
	(void)c;
}

/* Run prog with one argument as uid/gid 65534 and read the six ids it
 * prints; returns 0 when it printed them. */
static int ids_after_exec(const char *prog, int drop, unsigned ids[7])
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		if (drop) {
			setgroups(0, NULL);
			if (setgid(UT_NOBODY) || setuid(UT_NOBODY))
				_exit(2);
		} else if (setresgid(10, 20, 30) || setresuid(100, 200, 300)) {
			_exit(2);
		}
		execl(prog, prog, "--ids", (char *)NULL);
		_exit(3);
	}
	close(fds[1]);
	char buf[128] = { 0 };
	size_t got = 0;
	ssize_t r;
	while (got < sizeof buf - 1 && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)r;
	close(fds[0]);
	int st = ut_wait(pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return sscanf(buf, "%u %u %u %u %u %u %u", &ids[0], &ids[1], &ids[2], &ids[3], &ids[4],
		      &ids[5], &ids[6]) == 7 ? 0 : -1;
}

static int copy_self(const char *to)
{
	static char buf[1 << 16];
	int in = open(ut_self, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;
	int ok = in >= 0 && out >= 0;
	while (ok && (n = read(in, buf, sizeof buf)) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

static void test_setid_exec(void)
{
	CHECK_OK(copy_self("suidprog"));
	CHECK_OK(chown("suidprog", 1234, 4321));
	CHECK_OK(chmod("suidprog", 06755));
	unsigned ids[7] = { 0 };
	CHECK_OK(ids_after_exec("./suidprog", 1, ids));
	CHECK_EQ(ids[0], UT_NOBODY);
	CHECK_EQ(ids[1], 1234);
	CHECK_EQ(ids[2], 1234);
	CHECK_EQ(ids[3], UT_NOBODY);
	CHECK_EQ(ids[4], 4321);
	CHECK_EQ(ids[5], 4321);
	CHECK_EQ(ids[6], 1); /* AT_SECURE: the ids changed */

	/* A set-group-id file without group execute permission sets nothing. */
	CHECK_OK(chmod("suidprog", 02705));
	CHECK_OK(ids_after_exec("./suidprog", 1, ids));
	CHECK_EQ(ids[4], UT_NOBODY);

	/* A plain program: the saved ids become the effective ones. */
	CHECK_OK(copy_self("plainprog"));
	CHECK_OK(ids_after_exec("./plainprog", 0, ids));
	CHECK(ids[0] == 100 && ids[1] == 200 && ids[2] == 200);
	CHECK(ids[3] == 10 && ids[4] == 20 && ids[5] == 20);
	CHECK_EQ(ids[6], 1); /* AT_SECURE too: the real and effective ids differ */
}

static int print_ids(void)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;
	if (getresuid(&r, &e, &s) || getresgid(&rg, &eg, &sg))
		return 1;
	printf("%u %u %u %u %u %u %lu\n", r, e, s, rg, eg, sg, getauxval(AT_SECURE));
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--ids") == 0)
		return print_ids();
	ut_init(argc, argv);
	ut_scratch();
	uid_t r, e, s;
	CHECK_EQ(getauxval(AT_SECURE), getuid() != geteuid() || getgid() != getegid());
	CHECK_OK(getresuid(&r, &e, &s));
	CHECK_EQ(r, getuid());
	CHECK_EQ(e, geteuid());
	CHECK_OK(setresuid(-1, -1, -1));
	CHECK_OK(setresgid(-1, -1, -1));
	if (!ut_is_root()) {
		CHECK_ERR(setgroups(0, NULL), EPERM);
		ut_note("skipped the id changes: not root");
		return ut_done();
	}
	CHECK_OK(mkdir("grp", 0755));
	ut_child("resuid", resuid_child, NULL, 0);
	ut_child("reuid", reuid_child, NULL, 0);
	ut_child("resgid", resgid_child, NULL, 0);
	ut_child("groups", groups_child, NULL, 0);
	ut_child("nogroup", nogroup_child, NULL, 0);
	test_setid_exec();
	RES(0, 0, 0);
	return ut_done();
}
