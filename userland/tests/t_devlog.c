/*
 * t_devlog: the device nodes of /dev and the kernel message log.
 *
 * /dev/null, zero, full, random, urandom, kmsg, console and tty carry
 * Linux's numbers and behave as Linux's do (full: ENOSPC; random and
 * urandom: bytes that differ from read to read; tty: ENXIO in a new
 * session); stdin, stdout, stderr and fd lead to the descriptors; a
 * mounted disk opened with O_EXCL is EBUSY; a disk in /dev (vda on
 * Tempest; whatever block device the host has, if it has one with a size)
 * gives its size by BLKGETSIZE64 and reads at odd offsets the same bytes
 * as whole blocks.  syslog (klogctl) gives the log's size and text with
 * Linux's arguments and errors, and a line written to /dev/kmsg comes
 * back both from syslog and as a record of /dev/kmsg itself.  Runs on the
 * host's Linux too.
 */
#include "ut.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define BLKGETSIZE64 0x80081272

static void check_node(const char *path, int blk, unsigned maj, unsigned min)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		CHECK(!path);
		ut_say("missing: %s\n", path);
		return;
	}
	CHECK(blk ? S_ISBLK(st.st_mode) : S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), maj);
	CHECK_EQ(minor(st.st_rdev), min);
}

/* A new session has no controlling terminal: /dev/tty is ENXIO. */
static void new_session(void *arg)
{
	CHECK(setsid() > 0);
	CHECK_ERR(open("/dev/tty", O_RDWR), ENXIO);
}

static void test_char_devices(void)
{
	check_node("/dev/null", 0, 1, 3);
	check_node("/dev/zero", 0, 1, 5);
	check_node("/dev/full", 0, 1, 7);
	check_node("/dev/random", 0, 1, 8);
	check_node("/dev/urandom", 0, 1, 9);
	check_node("/dev/kmsg", 0, 1, 11);
	check_node("/dev/console", 0, 5, 1);
	char buf[64];
	int fd = CHECK_OK(open("/dev/full", O_RDWR));
	CHECK_ERR(write(fd, "x", 1), ENOSPC);
	memset(buf, 1, sizeof buf);
	CHECK_EQ(read(fd, buf, sizeof buf), (long)sizeof buf);
	CHECK(buf[0] == 0 && buf[63] == 0);
	close(fd);
	for (int i = 0; i < 2; i++) {
		const char *dev = i ? "/dev/random" : "/dev/urandom";
		char a[32], b[32];
		fd = CHECK_OK(open(dev, O_RDONLY));
		CHECK_EQ(read(fd, a, sizeof a), (long)sizeof a);
		CHECK_EQ(read(fd, b, sizeof b), (long)sizeof b);
		CHECK(memcmp(a, b, sizeof a) != 0);
		int zeros = 0;
		for (size_t k = 0; k < sizeof a; k++)
			zeros += a[k] == 0;
		CHECK(zeros < 8);
		close(fd);
	}
	/* the links into /proc: a process's own descriptors */
	char link[64];
	long n = readlink("/dev/stderr", link, sizeof link - 1);
	CHECK_EQ(n, 15);
	CHECK(n == 15 && memcmp(link, "/proc/self/fd/2", 15) == 0);
	struct stat a, b;
	CHECK_OK(stat("/dev/stdout", &a));
	CHECK_OK(fstat(1, &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(a.st_dev, b.st_dev);
	CHECK_OK(stat("/dev/fd/0", &a));
	CHECK_OK(fstat(0, &b));
	CHECK_EQ(a.st_ino, b.st_ino);
	fd = CHECK_OK(open("/dev/null", O_RDWR));
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(read(fd, buf, 1), 0);
	close(fd);
	/* /dev/tty is the controlling terminal: absent (ENXIO) for a process
	 * without one, as on the host's test runner */
	fd = open("/dev/tty", O_RDWR);
	CHECK(fd >= 0 || errno == ENXIO);
	if (fd >= 0) {
		check_node("/dev/tty", 0, 5, 0);
		close(fd);
	}
	ut_child("new session", new_session, NULL, 0);
}

/* The first block device in /dev with a size, or "" (the host may have
 * none: a container). */
static int find_disk(char *path, size_t n, uint64_t *size)
{
	DIR *d = opendir("/dev");
	if (!d)
		return -1;
	int found = -1;
	for (struct dirent *e; found < 0 && (e = readdir(d));) {
		snprintf(path, n, "/dev/%s", e->d_name);
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISBLK(st.st_mode))
			continue;
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		if (ioctl(fd, BLKGETSIZE64, size) == 0 && *size >= 8192)
			found = 0;
		close(fd);
	}
	closedir(d);
	return found;
}

static void test_disk(void)
{
	char path[300];
	uint64_t size = 0;
	if (find_disk(path, sizeof path, &size) != 0) {
		ut_note("no disk with a size in /dev: the disk checks left out");
		return;
	}
	int fd = CHECK_OK(open(path, O_RDONLY));
	static char whole[4096], part[100];
	CHECK_EQ(pread(fd, whole, sizeof whole, 0), (long)sizeof whole);
	CHECK_EQ(pread(fd, part, sizeof part, 1000), (long)sizeof part);
	CHECK(memcmp(part, whole + 1000, sizeof part) == 0);
	CHECK_EQ(lseek(fd, 0, SEEK_END), (long)size);
	CHECK_EQ(read(fd, part, sizeof part), 0);
	CHECK_EQ(pread(fd, part, sizeof part, (off_t)size - 10), 10);
	close(fd);
}

/* A mounted disk cannot be had alone (O_EXCL), as mkfs asks for it. */
static void test_mounted_disk(void)
{
	static char mounts[16384];
	int fd = open("/proc/mounts", O_RDONLY);
	long n = fd >= 0 ? read(fd, mounts, sizeof mounts - 1) : -1;
	if (fd >= 0)
		close(fd);
	mounts[n > 0 ? n : 0] = 0;
	char dev[128];
	struct stat st;
	for (char *l = mounts; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		if (sscanf(l, "%127s", dev) == 1 && strncmp(dev, "/dev/", 5) == 0 &&
		    stat(dev, &st) == 0 && S_ISBLK(st.st_mode)) {
			fd = open(dev, O_RDONLY);
			if (fd < 0) {           /* a container may keep us off its disks */
				ut_note("%s: %s: the O_EXCL check left out", dev, strerror(errno));
				return;
			}
			close(fd);
			CHECK_ERR(open(dev, O_RDONLY | O_EXCL), EBUSY);
			return;
		}
	}
	ut_note("no mounted disk in /dev: the O_EXCL check left out");
}

static char logbuf[1 << 20];

static void unprivileged_log(void *arg)
{
	CHECK_ERR(klogctl(5, NULL, 0), EPERM);          /* clear */
	CHECK_ERR(klogctl(4, logbuf, 100), EPERM);      /* read and clear */
	CHECK_ERR(open("/dev/kmsg", O_WRONLY), EACCES);
}

static void test_syslog(void)
{
	int size = CHECK_OK(klogctl(10, NULL, 0));
	CHECK(size >= 4096);
	CHECK_ERR(klogctl(3, NULL, 10), EINVAL);
	CHECK_ERR(klogctl(3, logbuf, -1), EINVAL);
	CHECK_EQ(klogctl(3, logbuf, 0), 0);
	CHECK_ERR(klogctl(99, logbuf, 10), EINVAL);
	CHECK_ERR(klogctl(8, NULL, 0), EINVAL);         /* console level out of range */

	/* a line written to /dev/kmsg is a kernel message */
	char marker[64];
	snprintf(marker, sizeof marker, "t_devlog marker %d", getpid());
	int kfd = CHECK_OK(open("/dev/kmsg", O_RDWR | O_NONBLOCK));
	char line[128];
	int len = snprintf(line, sizeof line, "<6>%s\n", marker);
	CHECK_EQ(write(kfd, line, len), len);
	CHECK_ERR(klogctl(3, UT_BADPTR, 100), EFAULT);         /* the log is not empty now */
	int n = CHECK_OK(klogctl(3, logbuf, sizeof logbuf - 1));
	if (n >= 0) {
		logbuf[n] = 0;
		CHECK(n > 0 && logbuf[0] == '<' && strchr(logbuf, '>') != NULL);
		CHECK(strstr(logbuf, marker) != NULL);
		CHECK(logbuf[n - 1] == '\n');
	}
	/* and a record of /dev/kmsg: "level,seq,usec,flags;text" */
	int found = 0;
	long last_seq = -1, ordered = 1;
	for (int i = 0; i < 100000; i++) {
		char rec[2048];
		long r = read(kfd, rec, sizeof rec - 1);
		if (r < 0 && errno == EPIPE)
			continue;               /* overwritten while we read: go on */
		if (r <= 0)
			break;
		rec[r] = 0;
		unsigned level;
		long seq;
		unsigned long long usec;
		char flag;
		CHECK_EQ(sscanf(rec, "%u,%ld,%llu,%c;", &level, &seq, &usec, &flag), 4);
		ordered &= seq > last_seq;
		last_seq = seq;
		found |= strstr(rec, marker) != NULL;
	}
	CHECK(errno == EAGAIN);
	CHECK(ordered);
	CHECK(found);
	close(kfd);
	ut_unprivileged("log as another user", unprivileged_log, NULL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_char_devices();
	test_disk();
	if (ut_is_root())
		test_mounted_disk();
	if (ut_is_root())
		test_syslog();
	else
		ut_note("not root: the log checks left out");
	return ut_done();
}
