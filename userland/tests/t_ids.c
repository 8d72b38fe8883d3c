/*
 * t_ids: who and where a process is.
 *
 * getuid, geteuid, getgid, getegid, setuid, setgid (root and not), uname,
 * arch_prctl (ARCH_GET_FS is musl's thread pointer; ARCH_SET_FS round
 * trip), set_tid_address, gettid, and unknown system call numbers giving
 * ENOSYS.
 */
#include "ut.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

static int exit_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_getids(void)
{
	CHECK_EQ(syscall(SYS_getuid), getuid());
	CHECK_EQ(syscall(SYS_geteuid), geteuid());
	CHECK_EQ(syscall(SYS_getgid), getgid());
	CHECK_EQ(syscall(SYS_getegid), getegid());
	/* A new file belongs to the effective ids. */
	CHECK_OK(ut_write_file("mine", "", 0, 0644));
	struct stat st;
	CHECK_OK(stat("mine", &st));
	CHECK_EQ(st.st_uid, geteuid());
	CHECK_EQ(st.st_gid, getegid());
	CHECK_EQ(syscall(SYS_getpid), getpid());
	CHECK_EQ(syscall(SYS_getppid), getppid());
	CHECK(getppid() > 0 && getppid() != getpid());
}

static void as_root_child(void *arg)
{
	CHECK_OK(setgid(4321));
	CHECK_EQ(getgid(), 4321);
	CHECK_EQ(getegid(), 4321);
	CHECK_OK(setuid(1234));
	CHECK_EQ(getuid(), 1234);
	CHECK_EQ(geteuid(), 1234);
	/* Files made now carry the new ids. */
	CHECK_OK(ut_write_file("pub/ids", "", 0, 0644));
	struct stat st;
	CHECK_OK(stat("pub/ids", &st));
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 4321);
	/* There is no way back. */
	CHECK_ERR(setuid(0), EPERM);
	CHECK_ERR(setgid(0), EPERM);
	CHECK_OK(setuid(1234)); /* to itself is fine */
	CHECK_OK(setgid(4321));
	CHECK_ERR(setuid(1235), EPERM);
	CHECK_EQ(getuid(), 1234);
}

static void test_setids(void)
{
	CHECK_ERR(setuid(-1), EINVAL);
	CHECK_ERR(setgid(-1), EINVAL);
	if (!ut_is_root()) {
		CHECK_ERR(setuid(getuid() == 0 ? 1 : 0), EPERM);
		CHECK_OK(setuid(getuid()));
		ut_note("skipped setuid/setgid to other ids: not root");
		return;
	}
	CHECK_OK(mkdir("pub", 0777));
	CHECK_OK(chmod("pub", 0777));
	ut_child("setuid", as_root_child, NULL, 0);
	/* Our own ids were not touched. */
	CHECK_EQ(getuid(), 0);
	CHECK_EQ(geteuid(), 0);
}

static void test_uname(void)
{
	struct utsname u;
	memset(&u, 0x7f, sizeof u);
	CHECK_OK(uname(&u));
	CHECK(memchr(u.sysname, 0, sizeof u.sysname) != NULL);
	CHECK(memchr(u.release, 0, sizeof u.release) != NULL);
	CHECK(memchr(u.machine, 0, sizeof u.machine) != NULL);
	CHECK(memchr(u.nodename, 0, sizeof u.nodename) != NULL);
	CHECK(u.sysname[0] != 0);
	CHECK(u.release[0] != 0);
	CHECK(strcmp(u.machine, "x86_64") == 0);
	CHECK_ERR(syscall(SYS_uname, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_uname, UT_KERNPTR), EFAULT);
}

static uintptr_t read_fs0(void)
{
	uintptr_t v;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(v));
	return v;
}

static inline long raw_arch_prctl(long code, unsigned long addr)
{
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"((long)SYS_arch_prctl), "D"(code), "S"(addr)
			 : "rcx", "r11", "memory");
	return r;
}

static void test_arch_prctl(void)
{
	unsigned long fs = 0;
	CHECK_OK(syscall(SYS_arch_prctl, ARCH_GET_FS, &fs));
	/* musl's thread pointer points at itself, and is pthread_self(). */
	CHECK(fs != 0);
	CHECK_EQ(fs, (unsigned long)pthread_self());
	CHECK_EQ(read_fs0(), fs);

	/* Move the thread pointer and back, with no function call between
	   (the stack protector reads its canary at %fs:0x28). */
	static uintptr_t fake[8];
	fake[0] = 0x1234abcd;
	fake[5] = ((uintptr_t *)fs)[5];
	long set = raw_arch_prctl(ARCH_SET_FS, (unsigned long)fake);
	uintptr_t seen = read_fs0();
	long back = raw_arch_prctl(ARCH_SET_FS, fs);
	CHECK_EQ(set, 0);
	CHECK_EQ(back, 0);
	CHECK_EQ(seen, 0x1234abcd);
	CHECK_EQ(read_fs0(), fs);

	unsigned long gs = 1;
	CHECK_OK(syscall(SYS_arch_prctl, ARCH_GET_GS, &gs));
	CHECK_EQ(gs, 0);
	CHECK_ERR(syscall(SYS_arch_prctl, 0x9999, &fs), EINVAL);
	CHECK_ERR(syscall(SYS_arch_prctl, ARCH_GET_FS, UT_BADPTR), EFAULT);
	CHECK_ERR(syscall(SYS_arch_prctl, ARCH_GET_FS, UT_KERNPTR), EFAULT);
	/* A kernel address is refused as a base. */
	CHECK_ERR(syscall(SYS_arch_prctl, ARCH_SET_FS, UT_KERNPTR), EPERM);
	CHECK_EQ(read_fs0(), fs);
}

static void test_tid(void)
{
	static int word;
	long tid = syscall(SYS_set_tid_address, &word);
	CHECK_EQ(tid, getpid());
	CHECK_EQ(syscall(SYS_gettid), getpid());
	/* A child's tid is its pid. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(syscall(SYS_set_tid_address, &word) == getpid() &&
		      syscall(SYS_gettid) == getpid() ? 0 : 1);
	CHECK_EQ(exit_status(ut_wait(pid)), 0);
}

static void test_enosys(void)
{
	CHECK_ERR(syscall(100000), ENOSYS);
	CHECK_ERR(syscall(100000, 1, 2, 3, 4, 5, 6), ENOSYS);
	CHECK_ERR(syscall(400), ENOSYS); /* a gap in Linux's table */
	CHECK_ERR(syscall(-1L), ENOSYS);
	CHECK_ERR(syscall(0x7fffffffL), ENOSYS);
	/* The process is fine afterwards. */
	CHECK(getpid() > 0);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	test_getids();
	test_setids();
	test_uname();
	test_arch_prctl();
	test_tid();
	test_enosys();
	return ut_done();
}
