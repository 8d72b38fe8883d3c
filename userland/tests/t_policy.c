/*
 * t_policy: calls for features a kernel may have in part, with one
 * answer each that a program can live with (kern/proc/sys_policy.c):
 * capget and capset (versions, dropping and raising), personality
 * (kept and inherited), the mlock family (ranges, flags,
 * RLIMIT_MEMLOCK), unshare and setns (what needs no namespace, what an
 * unprivileged user is refused), fallocate's checks, syncfs,
 * sync_file_range and readahead.  The scheduling policies are t_schedclass's.
 */
#include "ut.h"

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CAP_V3 0x20080522

struct cap_header { uint32_t version; int pid; };
struct cap_data { uint32_t effective, permitted, inheritable; };

static void check_caps(void)
{
	struct cap_header h = { CAP_V3, 0 };
	struct cap_data d[2];
	CHECK_OK(syscall(SYS_capget, &h, d));
	h.version = 0x1234;
	CHECK_ERR(syscall(SYS_capget, &h, d), EINVAL);
	CHECK_EQ(h.version, CAP_V3);                    /* the version it prefers */
	h.version = CAP_V3;
	h.pid = -5;
	CHECK_ERR(syscall(SYS_capget, &h, d), EINVAL);
	CHECK_ERR(syscall(SYS_capget, (void *)8, d), EFAULT);
}

static void caps_unprivileged(void *arg)
{
	(void)arg;
	struct cap_header h = { CAP_V3, 0 };
	struct cap_data d[2];
	CHECK_OK(syscall(SYS_capget, &h, d));
	CHECK_EQ(d[0].effective, 0);
	CHECK_EQ(d[0].permitted, 0);
	memset(d, 0, sizeof d);
	CHECK_OK(syscall(SYS_capset, &h, d));           /* keeping nothing: fine */
	d[0].effective = d[0].permitted = 1u << 21;     /* CAP_SYS_ADMIN */
	CHECK_ERR(syscall(SYS_capset, &h, d), EPERM);
}

static void check_personality(void)
{
	int cur = personality(0xffffffff);
	CHECK_EQ(cur & 0xff, PER_LINUX);
	CHECK_EQ(personality(cur | ADDR_NO_RANDOMIZE), cur);
	CHECK_EQ(personality(0xffffffff), cur | ADDR_NO_RANDOMIZE);
	pid_t pid = fork();
	if (pid == 0)
		_exit(personality(0xffffffff) == (cur | ADDR_NO_RANDOMIZE) ? 0 : 1);
	CHECK_EQ(ut_wait(pid), 0);                      /* fork keeps it */
	CHECK_EQ(personality(cur), cur | ADDR_NO_RANDOMIZE);
}

static void check_mlock(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	CHECK_OK(mlock(m, 2 * pg));
	CHECK_OK(mlock(m + 1, 10));                     /* widened to pages */
	CHECK_OK(munlock(m, 2 * pg));
	CHECK_OK(munmap(m + 2 * pg, pg));
	CHECK_ERR(mlock(m, 4 * pg), ENOMEM);            /* a hole */
	CHECK_ERR(syscall(SYS_mlock2, m, pg, 8), EINVAL);
	CHECK_OK(syscall(SYS_mlock2, m, pg, 1 /* MLOCK_ONFAULT */));
	CHECK_ERR(mlockall(0), EINVAL);
	CHECK_ERR(mlockall(MCL_ONFAULT), EINVAL);
	CHECK_OK(munlockall());
	munmap(m, 4 * pg);
}

static void mlock_unprivileged(void *arg)
{
	(void)arg;
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rlimit rl = { (rlim_t)pg, (rlim_t)pg };
	CHECK_OK(setrlimit(RLIMIT_MEMLOCK, &rl));
	CHECK_ERR(mlock(m, 4 * pg), ENOMEM);            /* past the limit */
	rl.rlim_cur = rl.rlim_max = 0;
	CHECK_OK(setrlimit(RLIMIT_MEMLOCK, &rl));
	CHECK_ERR(mlock(m, pg), EPERM);                 /* no locking at all */
	CHECK_ERR(mlockall(MCL_CURRENT), EPERM);
}

static void check_unshare(void)
{
	CHECK_OK(unshare(0));
	CHECK_OK(unshare(CLONE_FILES));
	CHECK_OK(unshare(CLONE_FS));
	CHECK_ERR(unshare(0x1), EINVAL);                /* not a clone flag unshare takes */
	CHECK_ERR(syscall(SYS_setns, 999, 0), EBADF);
	int fd = CHECK_OK(open(".", O_RDONLY));
	CHECK_ERR(syscall(SYS_setns, fd, 0), EINVAL);   /* not a namespace */
	close(fd);
}

static void unshare_unprivileged(void *arg)
{
	(void)arg;
	CHECK_ERR(unshare(CLONE_NEWUTS), EPERM);
	CHECK_ERR(unshare(CLONE_NEWNS), EPERM);
}

static void check_files(void)
{
	int fd = CHECK_OK(open("f", O_RDWR | O_CREAT, 0644));
	int r = fallocate(fd, 0, 0, 4096);
	CHECK(r == 0 || errno == EOPNOTSUPP);            /* the file system decides */
	CHECK_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	CHECK_ERR(fallocate(fd, 0, -1, 10), EINVAL);
	CHECK_ERR(fallocate(fd, 0x10000, 0, 10), EOPNOTSUPP);
	int ro = CHECK_OK(open("f", O_RDONLY));
	CHECK_ERR(fallocate(ro, 0, 0, 10), EBADF);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_ERR(fallocate(p[1], 0, 0, 10), ESPIPE);
	CHECK_OK(syncfs(fd));
	CHECK_ERR(syncfs(999), EBADF);
	CHECK_OK(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	CHECK_ERR(sync_file_range(fd, 0, 0, 8), EINVAL);
	CHECK_ERR(sync_file_range(fd, -1, 0, 0), EINVAL);
	CHECK_ERR(sync_file_range(p[1], 0, 0, 0), ESPIPE);
	CHECK_OK(readahead(fd, 0, 4096));
	CHECK_ERR(readahead(p[0], 0, 10), EINVAL);
	CHECK_ERR(readahead(999, 0, 10), EBADF);
	close(p[0]);
	close(p[1]);
	close(ro);
	close(fd);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	check_caps();
	ut_unprivileged("caps", caps_unprivileged, NULL);
	check_personality();
	check_mlock();
	ut_unprivileged("mlock", mlock_unprivileged, NULL);
	check_unshare();
	ut_unprivileged("unshare", unshare_unprivileged, NULL);
	check_files();
	/* restart_syscall with no interrupted call to restart: EINTR. */
	CHECK_ERR(syscall(SYS_restart_syscall), EINTR);
	return ut_done();
}
