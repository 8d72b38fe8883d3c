/*
 * t_devtimes: the times of device files are the time they were made, not
 * 1970: /dev, /dev/null and /dev/zero (devfs, made at its mount, as
 * devtmpfs's nodes are at boot), /dev/pts (devpts's mount) and both ends
 * of a new pseudo-terminal (made at the ptmx open).  Each of the access,
 * modification and change times is after 2000-01-01 and not in the
 * future.  Tempest's devfs and devpts once gave every node 0.
 */
#include "ut.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define Y2000 946684800L

static void check_times(const char *what, const struct stat *st)
{
	long now = (long)time(NULL);
	const long t[3] = { (long)st->st_atime, (long)st->st_mtime, (long)st->st_ctime };
	for (int i = 0; i < 3; i++) {
		if (t[i] < Y2000 || t[i] > now + 2)
			ut_check(0, __FILE__, __LINE__, "%s: %ctime %ld, want 2000-01-01 .. now (%ld)",
				 what, "amc"[i], t[i], now);
		else
			CHECK(1);
	}
}

static void test_devfs(void)
{
	static const char *const paths[] = { "/dev", "/dev/null", "/dev/zero", "/dev/pts" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		struct stat st;
		CHECK_OK(stat(paths[i], &st));
		check_times(paths[i], &st);
	}
}

static void test_pty(void)
{
	int m = CHECK_OK(posix_openpt(O_RDWR | O_NOCTTY));
	CHECK_EQ(grantpt(m), 0);
	CHECK_EQ(unlockpt(m), 0);
	struct stat st;
	CHECK_OK(fstat(m, &st));
	check_times("the pty master", &st);
	CHECK_OK(stat(ptsname(m), &st));
	check_times(ptsname(m), &st);
	close(m);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_devfs();
	test_pty();
	return ut_done();
}
