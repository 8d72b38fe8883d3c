/*
 * t_mount: mount and umount2 from user space, statfs and fstatfs, mknod
 * and mknodat, with Linux's errors.
 *
 * As root: /proc mounted a second time on a scratch directory (its
 * statfs magic, its files, its line in /proc/mounts), unmount refused
 * while a process is inside it (EBUSY) and then done, an unmount of what
 * is not a mount point (EINVAL), unknown types (ENODEV), missing or
 * non-directory targets (ENOENT, ENOTDIR), a regular file given as a
 * disk (ENOTBLK); as another user, EPERM for both calls.  mknod makes a
 * FIFO, a regular file and a device node that opens the device of its
 * number; another user may not make devices.  A FIFO is a named pipe:
 * opens wait for the other side, or not with O_NONBLOCK (ENXIO for a
 * writer alone).  Runs on the host's Linux too.
 */
#include "ut.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define PROC_MAGIC 0x9fa0

static char text[16384];

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

/* A file system type that needs a disk, from /proc/filesystems. */
static int disk_type(char *out, size_t n)
{
	if (slurp("/proc/filesystems") < 0)
		return -1;
	for (char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		if (l[0] == '\t') {
			size_t len = strcspn(l + 1, "\n");
			snprintf(out, n, "%.*s", (int)len, l + 1);
			return 0;
		}
	}
	return -1;
}

static void test_statfs(void)
{
	struct statfs s;
	CHECK_OK(statfs("/", &s));
	CHECK(s.f_bsize > 0 && s.f_blocks >= s.f_bfree && s.f_blocks > 0);
	CHECK(s.f_namelen >= 14);
	CHECK_OK(statfs("/proc", &s));
	CHECK_EQ(s.f_type, PROC_MAGIC);
	int fd = CHECK_OK(open("/proc/self/stat", O_RDONLY));
	CHECK_OK(fstatfs(fd, &s));
	CHECK_EQ(s.f_type, PROC_MAGIC);
	/* (musl's wrappers clear the buffer first: the calls themselves) */
	CHECK_ERR(syscall(SYS_fstatfs, fd, UT_BADPTR), EFAULT);
	close(fd);
	CHECK_ERR(statfs("/no/such/dir", &s), ENOENT);
	CHECK_ERR(statfs(UT_BADPTR, &s), EFAULT);
	CHECK_ERR(syscall(SYS_statfs, "/", UT_BADPTR), EFAULT);
	CHECK_ERR(fstatfs(-1, &s), EBADF);
	int p[2];
	CHECK_OK(pipe(p));
	CHECK_OK(fstatfs(p[0], &s));
	CHECK_EQ(s.f_type, 0x50495045);                 /* pipefs */
	close(p[0]);
	close(p[1]);
	CHECK_ERR(fstatfs(999, &s), EBADF);
}

static void unprivileged_mount(void *arg)
{
	CHECK_ERR(mount("proc", "mnt", "proc", 0, NULL), EPERM);
	CHECK_ERR(umount2("mnt", 0), EPERM);
	CHECK_ERR(umount2("/proc", 0), EPERM);
	CHECK_ERR(umount2("nowhere", 0), ENOENT);
	CHECK_ERR(mknod("dev0", S_IFCHR | 0600, makedev(1, 3)), EACCES);   /* the directory first */
	CHECK_ERR(mknod("pub/dev0", S_IFCHR | 0600, makedev(1, 3)), EPERM);
	CHECK_ERR(mknod("pub/dev1", S_IFBLK | 0600, makedev(1, 0)), EPERM);
	CHECK_OK(mknod("pub/fifo2", S_IFIFO | 0600, 0));
	unlink("pub/fifo2");
}

/* Is dir a mount point of type proc, as /proc/mounts lists it? */
static int listed(const char *dir)
{
	char cwd[256], want[300];
	if (!getcwd(cwd, sizeof cwd) || slurp("/proc/mounts") < 0)
		return -1;
	snprintf(want, sizeof want, " %s/%s proc ", cwd, dir);
	return strstr(text, want) != NULL;
}

static void test_mount(void)
{
	CHECK_OK(mkdir("mnt", 0755));
	CHECK_OK(ut_write_file("file", "x", 1, 0644));
	CHECK_OK(mount("proc", "mnt", "proc", 0, NULL));
	struct statfs s;
	CHECK_OK(statfs("mnt", &s));
	CHECK_EQ(s.f_type, PROC_MAGIC);
	struct stat st;
	CHECK_OK(stat("mnt/self/stat", &st));
	CHECK_EQ(listed("mnt"), 1);

	/* busy while a process is inside, then unmounted */
	pid_t pid = fork();
	if (pid == 0) {
		if (chdir("mnt") == 0)
			pause();
		_exit(1);
	}
	for (int i = 0; i < 200; i++) {
		char path[64], link[256];
		snprintf(path, sizeof path, "/proc/%d/cwd", pid);
		long n = readlink(path, link, sizeof link - 1);
		if (n > 4 && strncmp(link + n - 4, "/mnt", 4) == 0)
			break;
		usleep(10000);
	}
	CHECK_ERR(umount2("mnt", 0), EBUSY);
	kill(pid, 9);
	ut_wait(pid);
	CHECK_ERR(umount2("mnt", 0x100), EINVAL);      /* an unknown flag */
	CHECK_OK(umount2("mnt", 0));
	CHECK_EQ(listed("mnt"), 0);
	CHECK_ERR(umount2("mnt", 0), EINVAL);          /* no longer a mount point */
	CHECK_ERR(stat("mnt/self", &st), ENOENT);

	/* read-only, and a remount that keeps it so */
	CHECK_OK(mount("proc", "mnt", "proc", MS_RDONLY, NULL));
	CHECK_OK(statfs("mnt", &s));
	CHECK(s.f_flags & ST_RDONLY);
	char want[300], cwd[256];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	snprintf(want, sizeof want, " %s/mnt proc ro", cwd);
	CHECK(slurp("/proc/mounts") > 0 && strstr(text, want) != NULL);
	CHECK_OK(mount("proc", "mnt", "proc", MS_REMOUNT | MS_RDONLY, NULL));
	CHECK_ERR(mount("proc", "file", "proc", MS_REMOUNT | MS_RDONLY, NULL), EINVAL);
	CHECK_OK(umount2("mnt", 0));
	CHECK_ERR(mount("proc", "mnt", NULL, 0, NULL), EINVAL);        /* no type */
	CHECK_ERR(mount("none", "mnt", "no_such_fs_type", 0, NULL), ENODEV);
	CHECK_ERR(mount("proc", "nowhere", "proc", 0, NULL), ENOENT);
	CHECK_ERR(mount("proc", "file", "proc", 0, NULL), ENOTDIR);
	CHECK_ERR(mount("proc", UT_BADPTR, "proc", 0, NULL), EFAULT);
	CHECK_ERR(mount("proc", "mnt", UT_BADPTR, 0, NULL), EFAULT);
	CHECK_ERR(mount(UT_BADPTR, "mnt", "proc", 0, NULL), EFAULT);   /* the source is copied too */
	CHECK_ERR(mount("proc", "nowhere", "no_such_fs_type", 0, NULL), ENOENT);   /* target first */
	char type[64];
	if (disk_type(type, sizeof type) == 0) {
		CHECK_ERR(mount("file", "mnt", type, 0, NULL), ENOTBLK);
		CHECK_ERR(mount("no_such_disk", "mnt", type, 0, NULL), ENOENT);
	} else {
		CHECK(!"/proc/filesystems lists a type with a disk");
	}
	CHECK_OK(mkdir("pub", 0777));
	CHECK_OK(chmod("pub", 0777));
	ut_unprivileged("mount as another user", unprivileged_mount, NULL);
	CHECK_OK(rmdir("mnt"));
}

static void test_mknod(void)
{
	struct stat st;
	CHECK_OK(mknod("fifo", S_IFIFO | 0640, 0));
	CHECK_OK(stat("fifo", &st));
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0640 & ~umask(022));
	CHECK_ERR(mknod("fifo", S_IFIFO | 0640, 0), EEXIST);
	CHECK_OK(mknod("plain", 0644, 0));
	CHECK_OK(stat("plain", &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_size, 0);
	CHECK_ERR(mknod("bad", 0170000 | 0644, 0), EINVAL);
	CHECK_ERR(mknod("plain", 0170000 | 0644, 0), EINVAL);      /* the type first */
	CHECK_ERR(mknod("no/such/dir", 0170000 | 0644, 0), EINVAL);
	CHECK_ERR(mknod("dir", S_IFDIR | 0755, 0), EPERM);
	CHECK_ERR(mknod("no/such/dir/x", S_IFIFO | 0600, 0), ENOENT);
	CHECK_ERR(mknod(UT_BADPTR, S_IFIFO | 0600, 0), EFAULT);
	/* a device node is the device of its number */
	CHECK_OK(mknod("null2", S_IFCHR | 0666, makedev(1, 3)));
	CHECK_OK(stat("null2", &st));
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 1);
	CHECK_EQ(minor(st.st_rdev), 3);
	int fd = CHECK_OK(open("null2", O_RDWR));
	char c;
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(read(fd, &c, 1), 0);
	close(fd);
	CHECK_OK(mknodat(AT_FDCWD, "zero2", S_IFCHR | 0666, makedev(1, 5)));
	fd = CHECK_OK(open("zero2", O_RDONLY));
	c = 'x';
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(c, 0);
	close(fd);
	int dfd = CHECK_OK(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_OK(mknodat(dfd, "fifo3", S_IFIFO | 0600, 0));
	CHECK_ERR(mknodat(999, "fifo4", S_IFIFO | 0600, 0), EBADF);
	CHECK_ERR(mknodat(open("plain", O_RDONLY), "fifo5", S_IFIFO | 0600, 0), ENOTDIR);
	close(dfd);
}

/* Named pipes: opens wait for the other side (or not, with O_NONBLOCK),
 * data goes through, and the end of file comes with the last writer. */
static void test_fifo(void)
{
	CHECK_OK(mkfifo("ff", 0600));
	pid_t pid = fork();
	if (pid == 0) {
		int w = open("ff", O_WRONLY);   /* waits for the reader */
		if (w < 0 || write(w, "hello", 5) != 5)
			_exit(1);
		_exit(0);
	}
	int r = CHECK_OK(open("ff", O_RDONLY));     /* waits for the writer */
	char buf[16];
	long got = 0, n;
	while (got < 5 && (n = read(r, buf + got, sizeof buf - got)) > 0)
		got += n;
	CHECK_EQ(got, 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_EQ(read(r, buf, sizeof buf), 0);      /* the writer is gone */
	struct stat a, b;
	CHECK_OK(fstat(r, &a));
	CHECK_OK(stat("ff", &b));
	CHECK(S_ISFIFO(a.st_mode));
	CHECK_EQ(a.st_ino, b.st_ino);
	close(r);

	CHECK_ERR(open("ff", O_WRONLY | O_NONBLOCK), ENXIO);   /* no reader */
	r = CHECK_OK(open("ff", O_RDONLY | O_NONBLOCK));       /* does not wait */
	CHECK_EQ(read(r, buf, sizeof buf), 0);
	int w = CHECK_OK(open("ff", O_WRONLY | O_NONBLOCK));   /* now there is one */
	CHECK_EQ(write(w, "xy", 2), 2);
	CHECK_EQ(read(r, buf, sizeof buf), 2);
	CHECK_ERR(read(r, buf, sizeof buf), EAGAIN);           /* empty, a writer left */
	close(w);
	close(r);
	int rw = CHECK_OK(open("ff", O_RDWR));                 /* never waits */
	CHECK_EQ(write(rw, "z", 1), 1);
	CHECK_EQ(read(rw, buf, 1), 1);
	close(rw);
	CHECK_OK(unlink("ff"));
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	umask(022);
	test_statfs();
	test_fifo();
	if (ut_is_root()) {
		test_mount();
		test_mknod();
	} else {
		ut_note("not root: mount and mknod left out");
	}
	return ut_done();
}
