/*
 * t_memfd: memfd_create and file seals, as Linux answers.
 *
 * A memfd is a regular file (fstat, mode 0777, size), read and written
 * like one (holes read as zeros), made longer and shorter by ftruncate,
 * shared with a MAP_SHARED mapping in both directions, named
 * "/memfd:NAME (deleted)" in /proc/self/fd; MFD_CLOEXEC; seals: none
 * without MFD_ALLOW_SEALING (F_SEAL_SEAL, EPERM to add), F_SEAL_SHRINK,
 * F_SEAL_GROW and F_SEAL_WRITE refusing what they name (EPERM),
 * F_SEAL_WRITE refused while mapped (EBUSY), F_SEAL_SEAL ending the
 * adding; and the errors (unknown flags, a long name, a bad name
 * pointer, seals on a file that is no memfd).
 */
#include "ut.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x01
#define F_SEAL_SHRINK 0x02
#define F_SEAL_GROW 0x04
#define F_SEAL_WRITE 0x08
#endif

static int mfd(const char *name, unsigned flags)
{
	return (int)syscall(SYS_memfd_create, name, flags);
}

static void check_file(void)
{
	int fd = CHECK_OK(mfd("t_memfd", 1 /* MFD_CLOEXEC */));
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0777);
	CHECK_EQ(st.st_size, 0);
	CHECK_EQ(write(fd, "memfd", 5), 5);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	CHECK_EQ(pwrite(fd, "far", 3, 3 * 4096), 3);            /* a hole between */
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, 3 * 4096 + 3);
	char buf[16];
	CHECK_EQ(pread(fd, buf, 5, 0), 5);
	CHECK(memcmp(buf, "memfd", 5) == 0);
	CHECK_EQ(pread(fd, buf, 4, 4096), 4);
	CHECK(memcmp(buf, "\0\0\0\0", 4) == 0);
	CHECK_EQ(ftruncate(fd, 2), 0);
	CHECK_EQ(pread(fd, buf, 16, 0), 2);
	CHECK_EQ(ftruncate(fd, 8), 0);
	CHECK_EQ(pread(fd, buf, 16, 0), 8);
	CHECK(memcmp(buf, "me\0\0\0\0\0\0", 8) == 0);          /* zeros after a shrink */
	char link[64], path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	CHECK(n > 0);
	link[n > 0 ? n : 0] = 0;
	CHECK(strcmp(link, "/memfd:t_memfd (deleted)") == 0);
	/* Shared with a mapping both ways. */
	CHECK_EQ(ftruncate(fd, 2 * 4096), 0);
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		CHECK(memcmp(p, "me", 2) == 0);
		memcpy(p + 4096, "mapped", 6);
		CHECK_EQ(pread(fd, buf, 6, 4096), 6);
		CHECK(memcmp(buf, "mapped", 6) == 0);
		CHECK_EQ(pwrite(fd, "written", 7, 100), 7);
		CHECK(memcmp(p + 100, "written", 7) == 0);
		munmap(p, 2 * 4096);
	}
	int fd2 = CHECK_OK(mfd("", 0));
	CHECK_EQ(fcntl(fd2, F_GETFD), 0);
	close(fd2);
	close(fd);
}

static void check_seals(void)
{
	int fd = CHECK_OK(mfd("plain", 0));
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SEAL);             /* sealing not allowed */
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EPERM);
	close(fd);
	fd = CHECK_OK(mfd("sealed", 2 /* MFD_ALLOW_SEALING */));
	CHECK_EQ(fcntl(fd, F_GET_SEALS), 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	CHECK_ERR(ftruncate(fd, 5), EPERM);
	CHECK_EQ(ftruncate(fd, 20), 0);
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW), 0);
	CHECK_ERR(ftruncate(fd, 30), EPERM);
	CHECK_ERR(pwrite(fd, "x", 1, 20), EPERM);                  /* past the end: growing */
	CHECK_EQ(pwrite(fd, "x", 1, 0), 1);                        /* within: fine */
	char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EBUSY);    /* mapped */
	if (p != MAP_FAILED)
		munmap(p, 4096);
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), 0);
	CHECK_ERR(pwrite(fd, "y", 1, 0), EPERM);
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EPERM);
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL), 0);
	CHECK_ERR(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), EPERM);
	CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
	close(fd);
}

static void check_errors(void)
{
	char name[300];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = 0;
	CHECK_ERR(mfd(name, 0), EINVAL);
	CHECK_ERR(mfd("x", 0x100), EINVAL);
	CHECK_ERR(mfd((const char *)8, 0), EFAULT);
	int pfd[2];
	CHECK_EQ(pipe(pfd), 0);
	CHECK_ERR(fcntl(pfd[0], F_GET_SEALS), EINVAL);
	close(pfd[0]);
	close(pfd[1]);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	check_file();
	check_seals();
	check_errors();
	return ut_done();
}
