/*
 * t_membarrier: membarrier as Linux answers it.
 *
 * QUERY offers the global, expedited and sync-core commands; a flag is
 * EINVAL, an unknown command EINVAL; the private commands are EPERM
 * before their own registration and 0 after, the global ones need none;
 * a forked child keeps the registrations, an exec'd program starts
 * without them.
 */
#include "ut.h"

#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define Q           0
#define GLOBAL      (1 << 0)
#define GLOBAL_EXP  (1 << 1)
#define REG_GLOBAL  (1 << 2)
#define PRIV_EXP    (1 << 3)
#define REG_PRIV    (1 << 4)
#define SYNC_CORE   (1 << 5)
#define REG_SYNC    (1 << 6)

static long mb(int cmd, unsigned flags)
{
	return syscall(SYS_membarrier, cmd, flags, 0);
}

static void child_registered(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(mb(PRIV_EXP, 0) == 0 ? 0 : 1);
	CHECK_EQ(ut_wait(pid), 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--after-exec") == 0)
		return mb(PRIV_EXP, 0) == -1 && errno == EPERM ? 0 : 1;
	ut_init(argc, argv);
	long mask = CHECK_OK(mb(Q, 0));
	CHECK_EQ(mask & 0x7f, 0x7f);
	CHECK_ERR(mb(Q, 1), EINVAL);
	CHECK_ERR(mb(GLOBAL, 1), EINVAL);
	CHECK_ERR(mb(1 << 20, 0), EINVAL);
	CHECK_ERR(mb(PRIV_EXP | GLOBAL, 0), EINVAL);     /* one command at a time */
	CHECK_EQ(mb(GLOBAL, 0), 0);
	CHECK_EQ(mb(GLOBAL_EXP, 0), 0);
	CHECK_ERR(mb(PRIV_EXP, 0), EPERM);
	CHECK_ERR(mb(SYNC_CORE, 0), EPERM);
	CHECK_EQ(mb(REG_PRIV, 0), 0);
	CHECK_EQ(mb(PRIV_EXP, 0), 0);
	CHECK_ERR(mb(SYNC_CORE, 0), EPERM);             /* its own registration */
	CHECK_EQ(mb(REG_SYNC, 0), 0);
	CHECK_EQ(mb(SYNC_CORE, 0), 0);
	CHECK_EQ(mb(REG_GLOBAL, 0), 0);
	child_registered();
	pid_t pid = fork();
	if (pid == 0) {
		char self[256];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		if (n <= 0)
			_exit(2);
		self[n] = 0;
		execl(self, self, "--after-exec", (char *)NULL);
		_exit(3);
	}
	CHECK_EQ(ut_wait(pid), 0);
	return ut_done();
}
