/*
 * t_tmpfs: the memory file system, with Linux's semantics and errors.
 *
 * Mount options (size=, nr_inodes=, mode=, uid=, gid=; bad ones EINVAL
 * with a line in the kernel log); every file type (regular, directory,
 * symbolic link, FIFO, character and block devices, an AF_UNIX socket
 * bound to a name); data through read/write, holes, truncation both ways
 * and mappings, shared and private, with SIGBUS past the end; ENOSPC at
 * size= (a short write first) and at nr_inodes=; sparse files costing
 * only what is written, and SIGBUS for a hole a full mount cannot back; hard links; rename and
 * its errors (ENOENT, EEXIST-free replacement, EISDIR, ENOTDIR,
 * ENOTEMPTY, EINVAL, EXDEV, EBUSY, EACCES, EPERM, ENAMETOOLONG, ELOOP);
 * permissions and ownership (a set-group-ID directory's group); times;
 * readdir over a large directory; memory given back (statfs, and
 * /proc/meminfo's Shmem) at unlink, at the last close of an unlinked
 * file and at unmount; unmount refused while in use; a program run from
 * tmpfs.  In Tempest, /tmp itself is tmpfs; /dev/shm is one too, with
 * shm_open and sem_open working in it.
 *
 * Mounting needs root: on the host's Linux the checks run in a child in a
 * mount namespace of its own (unshare), so nothing is left mounted; in
 * Tempest (no namespaces) the child mounts directly.  Without root they
 * are skipped with a note.
 */
#include "ut.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TMPFS_MAGIC 0x01021994
#define PG 4096

/* Relative to the scratch directory, so that an unprivileged child can
 * reach them when an ancestor of it is private. */
static const char mnt[] = "m";          /* the test's tmpfs */
static const char other[] = "o";        /* a second one: options, ENOSPC, unmount */
static const char scratch[] = ".";      /* not tmpfs on the host (EXDEV) */

static int on_tempest(void)
{
	struct utsname u;
	return uname(&u) == 0 && strcmp(u.sysname, "Tempest") == 0;
}

static char *at(const char *base, const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;
	char *b = buf[i++ & 3];
	snprintf(b, PATH_MAX, "%s/%s", base, name);
	return b;
}

#define M(name) at(mnt, name)

static void fill(char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(seed * 31 + i * 7 + (i >> 12));
}

static long free_blocks(const char *path)
{
	struct statfs s;
	return statfs(path, &s) == 0 ? (long)s.f_bfree : -1;
}

/* /proc/meminfo's Shmem, in KiB (-1 if absent). */
static long shmem_kib(void)
{
	return ut_proc_number("/proc/meminfo", "Shmem:");
}

/* Does the kernel log hold a line naming both words (newest 8 KiB)? */
static int klog_has(const char *a, const char *b)
{
	static char log[1 << 17];
	int n = klogctl(3, log, sizeof log - 1);
	if (n < 0)
		return -1;
	log[n] = 0;
	char *start = n > 8192 ? log + n - 8192 : log;
	for (char *l = start; l && *l; ) {
		char *e = strchr(l, '\n');
		if (e)
			*e = 0;
		int hit = strstr(l, a) && strstr(l, b);
		if (e)
			*e = '\n';
		if (hit)
			return 1;
		l = e ? e + 1 : NULL;
	}
	return 0;
}

static int do_mount(const char *dir, const char *opts)
{
	return mount("tmpfs", dir, "tmpfs", 0, opts);
}

/* ---- mount options ---- */

static void test_options(void)
{
	struct stat st;
	struct statfs s;
	CHECK_OK(do_mount(other, "size=1m,mode=0750,uid=123,gid=456,nr_inodes=100"));
	CHECK_OK(stat(other, &st));
	CHECK_EQ(st.st_mode, S_IFDIR | 0750);
	CHECK_EQ(st.st_uid, 123);
	CHECK_EQ(st.st_gid, 456);
	CHECK_OK(statfs(other, &s));
	CHECK_EQ(s.f_type, TMPFS_MAGIC);
	CHECK_EQ(s.f_bsize, PG);
	CHECK_EQ(s.f_blocks, 256);
	CHECK_EQ(s.f_bfree, 256);
	CHECK_EQ(s.f_files, 100);
	CHECK_EQ(s.f_ffree, 99);            /* the root is one */
	CHECK_OK(umount(other));
	CHECK_OK(do_mount(other, "size=3000,,mode=1777"));     /* rounded up to a page */
	CHECK_OK(statfs(other, &s));
	CHECK_EQ(s.f_blocks, 1);
	CHECK_OK(stat(other, &st));
	CHECK_EQ(st.st_mode, S_IFDIR | 01777);
	CHECK_OK(umount(other));
	CHECK_OK(do_mount(other, "size=10%"));
	CHECK_OK(umount(other));
	CHECK_OK(do_mount(other, NULL));     /* Linux's defaults */
	CHECK_OK(stat(other, &st));
	CHECK_EQ(st.st_mode, S_IFDIR | 01777);
	CHECK_OK(umount(other));

	static const char *const bad[] = {
		"size=abc", "size=", "size", "size=1x", "mode=9", "mode=", "uid=-1",
		"uid=4294967295", "gid=x", "nr_inodes=1q", "nosuchopt=1", "nosuchopt",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		errno = 0;
		int r = do_mount(other, bad[i]);
		ut_check(r == -1 && errno == EINVAL, __FILE__, __LINE__,
			 "mount -o %s gives EINVAL (got %d, errno %d)", bad[i], r, errno);
		if (r == 0)
			umount(other);
	}
	int seen = klog_has("tmpfs", "nosuchopt");
	if (seen < 0 && !on_tempest())
		ut_note("skipped the kernel log's reason: syslog refused (%s)", strerror(errno));
	else
		CHECK_EQ(seen, 1);
	/* Not a directory, and no such place. */
	CHECK_ERR(do_mount(at(scratch, "nosuch"), NULL), ENOENT);
	CHECK_OK(ut_write_file(at(scratch, "plain"), "x", 1, 0644));
	CHECK_ERR(do_mount(at(scratch, "plain"), NULL), ENOTDIR);
	unlink(at(scratch, "plain"));
}

/* ---- file types ---- */

static void test_types(void)
{
	struct stat st;
	CHECK_OK(ut_write_file(M("reg"), "hello", 5, 0640));
	CHECK_OK(mkdir(M("dir"), 0755));
	CHECK_OK(symlink("reg", M("lnk")));
	CHECK_OK(mkfifo(M("fifo"), 0600));
	CHECK_OK(mknod(M("null"), S_IFCHR | 0666, makedev(1, 3)));
	CHECK_OK(mknod(M("blk"), S_IFBLK | 0600, makedev(7, 0)));
	CHECK_OK(lstat(M("reg"), &st));
	CHECK(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0640 && st.st_size == 5);
	CHECK_EQ(st.st_nlink, 1);
	CHECK_OK(lstat(M("dir"), &st));
	CHECK(S_ISDIR(st.st_mode) && st.st_nlink == 2);
	CHECK_OK(lstat(M("lnk"), &st));
	CHECK(S_ISLNK(st.st_mode) && st.st_size == 3);
	char buf[64] = { 0 };
	CHECK_EQ(readlink(M("lnk"), buf, sizeof buf), 3);
	CHECK_EQ(memcmp(buf, "reg", 3), 0);
	CHECK_EQ(ut_read_file(M("lnk"), buf, sizeof buf), 5);   /* followed */
	CHECK_EQ(memcmp(buf, "hello", 5), 0);
	CHECK_ERR(readlink(M("reg"), buf, sizeof buf), EINVAL);
	CHECK_OK(lstat(M("fifo"), &st));
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_OK(lstat(M("null"), &st));
	CHECK(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
	CHECK_OK(lstat(M("blk"), &st));
	CHECK(S_ISBLK(st.st_mode) && st.st_rdev == makedev(7, 0));
	/* The device node opens the device of its number: /dev/null. */
	int fd = CHECK_OK(open(M("null"), O_RDWR));
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(read(fd, buf, sizeof buf), 0);
	close(fd);
	/* The FIFO is a pipe. */
	fd = CHECK_OK(open(M("fifo"), O_RDWR | O_NONBLOCK));
	CHECK_EQ(write(fd, "pq", 2), 2);
	CHECK_EQ(read(fd, buf, sizeof buf), 2);
	close(fd);
	/* A socket bound to a name in tmpfs. */
	int srv = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", M("sock"));
	CHECK_OK(bind(srv, (struct sockaddr *)&sa, sizeof sa));
	CHECK_OK(listen(srv, 1));
	CHECK_OK(lstat(M("sock"), &st));
	CHECK(S_ISSOCK(st.st_mode));
	int dup = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_ERR(bind(dup, (struct sockaddr *)&sa, sizeof sa), EADDRINUSE);
	close(dup);
	int cli = CHECK_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CHECK_OK(connect(cli, (struct sockaddr *)&sa, sizeof sa));
	int acc = CHECK_OK(accept(srv, NULL, NULL));
	CHECK_EQ(write(cli, "z", 1), 1);
	CHECK_EQ(read(acc, buf, 1), 1);
	CHECK_EQ(buf[0], 'z');
	close(acc);
	close(cli);
	close(srv);
	/* readdir's types. */
	DIR *d = opendir(mnt);
	CHECK(d != NULL);
	int types = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		unsigned char want = !strcmp(e->d_name, "reg") ? DT_REG :
				     !strcmp(e->d_name, "dir") ? DT_DIR :
				     !strcmp(e->d_name, "lnk") ? DT_LNK :
				     !strcmp(e->d_name, "fifo") ? DT_FIFO :
				     !strcmp(e->d_name, "null") ? DT_CHR :
				     !strcmp(e->d_name, "blk") ? DT_BLK :
				     !strcmp(e->d_name, "sock") ? DT_SOCK : DT_UNKNOWN;
		if (want != DT_UNKNOWN) {
			ut_check(e->d_type == want, __FILE__, __LINE__, "%s has d_type %d (want %d)",
				 e->d_name, e->d_type, want);
			types++;
		}
	}
	if (d)
		closedir(d);
	CHECK_EQ(types, 7);
	/* mknod of a directory or of a bad type; devices for root only. */
	CHECK_ERR(mknod(M("d2"), S_IFDIR | 0755, 0), EPERM);
	CHECK_ERR(mknod(M("reg"), S_IFIFO | 0600, 0), EEXIST);
	const char *names[] = { "reg", "lnk", "fifo", "null", "blk", "sock" };
	for (size_t i = 0; i < 6; i++)
		CHECK_OK(unlink(M(names[i])));
	CHECK_OK(rmdir(M("dir")));
}

/* ---- data ---- */

static char big[64 * 1024], back[64 * 1024];

static void test_data(void)
{
	fill(big, sizeof big, 1);
	int fd = CHECK_OK(open(M("data"), O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, big, 10000), 10000);
	CHECK_EQ(pwrite(fd, big + 10000, sizeof big - 10000, 10000), (long)(sizeof big - 10000));
	CHECK_EQ(pread(fd, back, sizeof back, 0), (long)sizeof back);
	CHECK_EQ(memcmp(big, back, sizeof big), 0);
	/* A hole reads as zeros and the size covers it. */
	CHECK_EQ(pwrite(fd, "end", 3, 200000), 3);
	struct stat st;
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_size, 200003);
	CHECK_EQ(pread(fd, back, PG, 100000), PG);
	int zero = 1;
	for (int i = 0; i < PG; i++)
		zero &= back[i] == 0;
	CHECK(zero);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 200003);
	CHECK_EQ(pread(fd, back, 10, 200003), 0);                 /* end of file */
	/* Appends. */
	int afd = CHECK_OK(open(M("data"), O_WRONLY | O_APPEND));
	CHECK_EQ(write(afd, "++", 2), 2);
	close(afd);
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_size, 200005);
	CHECK_OK(fsync(fd));
	CHECK_OK(fdatasync(fd));
	close(fd);
	/* Data outlives every descriptor: the name keeps it. */
	fd = CHECK_OK(open(M("data"), O_RDONLY));
	CHECK_EQ(read(fd, back, sizeof back), (long)sizeof back);
	CHECK_EQ(memcmp(big, back, sizeof big), 0);
	close(fd);
	int dfd = CHECK_OK(open(mnt, O_RDONLY));
	CHECK_ERR(read(dfd, back, 1), EISDIR);
	close(dfd);
	CHECK_OK(unlink(M("data")));
}

static void test_truncate(void)
{
	fill(big, 3 * PG, 2);
	int fd = CHECK_OK(open(M("tr"), O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, big, 3 * PG), 3 * PG);
	CHECK_OK(ftruncate(fd, 5000));
	struct stat st;
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_size, 5000);
	CHECK_EQ(pread(fd, back, 3 * PG, 0), 5000);
	CHECK_EQ(memcmp(back, big, 5000), 0);
	CHECK_OK(ftruncate(fd, 3 * PG));           /* grows with zeros, not the old bytes */
	CHECK_EQ(pread(fd, back, 3 * PG, 0), 3 * PG);
	CHECK_EQ(memcmp(back, big, 5000), 0);
	int zero = 1;
	for (int i = 5000; i < 3 * PG; i++)
		zero &= back[i] == 0;
	CHECK(zero);
	CHECK_OK(truncate(M("tr"), 10));
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_size, 10);
	CHECK_ERR(ftruncate(fd, -1), EINVAL);
	CHECK_ERR(truncate(mnt, 0), EISDIR);
	int ro = CHECK_OK(open(M("tr"), O_RDONLY));
	CHECK_ERR(ftruncate(ro, 0), EINVAL);
	close(ro);
	/* O_TRUNC. */
	close(CHECK_OK(open(M("tr"), O_WRONLY | O_TRUNC)));
	CHECK_OK(stat(M("tr"), &st));
	CHECK_EQ(st.st_size, 0);
	close(fd);
	CHECK_OK(unlink(M("tr")));
}

static sigjmp_buf bus_jmp;

static void on_bus(int sig)
{
	siglongjmp(bus_jmp, sig);
}

/* Does reading p raise SIGBUS? */
static int faults(volatile char *p)
{
	struct sigaction sa = { .sa_handler = on_bus }, old;
	sigaction(SIGBUS, &sa, &old);
	int sig = sigsetjmp(bus_jmp, 1);
	if (sig == 0)
		(void)*p;
	sigaction(SIGBUS, &old, NULL);
	return sig == SIGBUS;
}

static void test_mmap(void)
{
	fill(big, 3 * PG, 3);
	int fd = CHECK_OK(open(M("map"), O_RDWR | O_CREAT | O_TRUNC, 0644));
	CHECK_EQ(write(fd, big, 3 * PG), 3 * PG);
	char *p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	CHECK_EQ(memcmp(p, big, 3 * PG), 0);
	memcpy(p + 100, "through the map", 15);
	CHECK_EQ(pread(fd, back, 15, 100), 15);
	CHECK_EQ(memcmp(back, "through the map", 15), 0);
	CHECK_EQ(pwrite(fd, "by write", 8, PG + 7), 8);
	CHECK_EQ(memcmp(p + PG + 7, "by write", 8), 0);
	CHECK(faults(p + 3 * PG));                /* past the end: SIGBUS */
	CHECK_OK(msync(p, 3 * PG, MS_SYNC));
	/* A private mapping copies at its first store. */
	char *q = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(q != MAP_FAILED);
	if (q != MAP_FAILED) {
		CHECK_EQ(memcmp(q + 100, "through the map", 15), 0);
		memcpy(q + 2 * PG, "private", 7);
		CHECK_EQ(pread(fd, back, 7, 2 * PG), 7);
		CHECK(memcmp(back, "private", 7) != 0);
		CHECK_EQ(memcmp(p + 2 * PG, big + 2 * PG, 7), 0);
		munmap(q, 3 * PG);
	}
	/* Truncation through the mapping: the cut bytes are gone, the page
	 * past the new end faults, and growing again shows zeros. */
	CHECK_OK(ftruncate(fd, PG + PG / 2));
	CHECK(faults(p + 2 * PG));
	CHECK_OK(ftruncate(fd, 3 * PG));
	int zero = 1;
	for (int i = PG + PG / 2; i < 3 * PG; i++)
		zero &= p[i] == 0;
	CHECK(zero);
	CHECK_EQ(memcmp(p + 100, "through the map", 15), 0);
	p[3 * PG - 1] = 'Z';
	munmap(p, 4 * PG);
	close(fd);
	/* The stores outlive the mapping and the descriptor. */
	CHECK_EQ(ut_read_file(M("map"), back, 3 * PG), 3 * PG);
	CHECK_EQ(back[3 * PG - 1], 'Z');
	CHECK_EQ(memcmp(back + PG + 7, "by write", 8), 0);
	CHECK_OK(unlink(M("map")));
}

/* ---- ENOSPC and memory given back ---- */

static void test_enospc(void)
{
	CHECK_OK(do_mount(other, "size=64k,nr_inodes=8"));
	CHECK_EQ(free_blocks(other), 16);
	fill(big, sizeof big, 4);
	int fd = CHECK_OK(open(at(other, "f"), O_RDWR | O_CREAT, 0644));
	CHECK_EQ(write(fd, big, 60000), 60000);
	CHECK_EQ(write(fd, big, 10000), 65536 - 60000);         /* short, then full */
	CHECK_ERR(write(fd, big, 10), ENOSPC);
	CHECK_EQ(free_blocks(other), 0);
	CHECK_EQ(pread(fd, back, sizeof back, 0), 65536);
	CHECK_EQ(memcmp(back, big, 60000), 0);
	CHECK_EQ(memcmp(back + 60000, big, 65536 - 60000), 0);
	/* Shrinking gives pages back, and they can be written again. */
	CHECK_OK(ftruncate(fd, 3 * PG));
	CHECK_EQ(free_blocks(other), 13);
	CHECK_EQ(pwrite(fd, big, 2 * PG, 3 * PG), 2 * PG);
	CHECK_EQ(free_blocks(other), 11);
	/* Unlinked while open: the pages stay until the last close. */
	CHECK_OK(unlink(at(other, "f")));
	CHECK_EQ(free_blocks(other), 11);
	CHECK_EQ(pread(fd, back, 2 * PG, 3 * PG), 2 * PG);
	CHECK_EQ(memcmp(back, big, 2 * PG), 0);
	close(fd);
	CHECK_EQ(free_blocks(other), 16);
	/* nr_inodes: the root and 7 more. */
	int made = 0;
	for (int i = 0; i < 10; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%d", i);
		int f = open(at(other, name), O_WRONLY | O_CREAT, 0644);
		if (f < 0) {
			CHECK_EQ(errno, ENOSPC);
			break;
		}
		close(f);
		made++;
	}
	CHECK_EQ(made, 7);
	CHECK_ERR(mkdir(at(other, "d"), 0755), ENOSPC);
	CHECK_ERR(symlink("x", at(other, "s")), ENOSPC);
	CHECK_OK(unlink(at(other, "n0")));
	CHECK_OK(mkdir(at(other, "d"), 0755));
	CHECK_OK(umount(other));
}

/* A hole costs nothing: a byte at 2 GiB on a 64 KiB mount takes one page,
 * truncation up takes none, and truncation down gives the page back.  A
 * full mount's shared mapping gets SIGBUS on a hole, and works on pages
 * already written. */
static void test_sparse(void)
{
	CHECK_OK(do_mount(other, "size=64k"));
	int fd = CHECK_OK(open(at(other, "sparse"), O_RDWR | O_CREAT, 0644));
	const off_t far = (off_t)1 << 31;
	CHECK_EQ(pwrite(fd, "xxx", 3, far), 3);
	CHECK_EQ(free_blocks(other), 15);
	struct stat st;
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_size, far + 3);
	CHECK_EQ(st.st_blocks, PG / 512);
	CHECK_EQ(pread(fd, back, 3, far), 3);
	CHECK_EQ(memcmp(back, "xxx", 3), 0);
	CHECK_OK(ftruncate(fd, (off_t)1 << 32));
	CHECK_EQ(free_blocks(other), 15);
	CHECK_OK(ftruncate(fd, (off_t)1 << 30));
	CHECK_EQ(free_blocks(other), 16);
	/* Every page of the mount written, in a file twice as long. */
	CHECK_OK(ftruncate(fd, 0));
	fill(big, sizeof big, 6);
	CHECK_EQ(pwrite(fd, big, 16 * PG, 0), 16 * PG);
	CHECK_EQ(free_blocks(other), 0);
	CHECK_OK(ftruncate(fd, 32 * PG));
	CHECK_ERR(pwrite(fd, "y", 1, 20 * PG), ENOSPC);
	char *p = mmap(NULL, 32 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		CHECK(!faults(p + 3 * PG));
		p[3 * PG] = 'M';
		CHECK(faults(p + 20 * PG));             /* a hole the mount cannot back */
		munmap(p, 32 * PG);
	}
	CHECK_EQ(pread(fd, back, 1, 3 * PG), 1);
	CHECK_EQ(back[0], 'M');
	close(fd);
	CHECK_OK(unlink(at(other, "sparse")));
	CHECK_EQ(free_blocks(other), 16);
	CHECK_OK(umount(other));
}

static void test_memory(void)
{
	long before = shmem_kib(), fb = free_blocks(mnt);
	size_t mib = 2;
	fill(big, sizeof big, 5);
	int fd = CHECK_OK(open(M("mem"), O_RDWR | O_CREAT | O_TRUNC, 0644));
	for (size_t off = 0; off < mib << 20; off += sizeof big)
		if (write(fd, big, sizeof big) != (long)sizeof big)
			break;
	close(fd);
	long during = shmem_kib();
	CHECK_EQ(free_blocks(mnt), fb - (long)(mib << 20) / PG);
	CHECK_OK(unlink(M("mem")));
	long after = shmem_kib();
	CHECK_EQ(free_blocks(mnt), fb);
	if (before < 0) {
		ut_note("skipped Shmem: no /proc/meminfo");
	} else {
		/* (Other processes change Shmem too: generous bounds.) */
		ut_check(during - before >= (long)(mib << 10) * 3 / 4, __FILE__, __LINE__,
			 "Shmem grew by the file (%ld -> %ld kB)", before, during);
		ut_check(during - after >= (long)(mib << 10) * 3 / 4, __FILE__, __LINE__,
			 "Shmem shrank at unlink (%ld -> %ld kB)", during, after);
	}
	/* Unmount gives back what its files held. */
	CHECK_OK(do_mount(other, "size=8m"));
	fd = CHECK_OK(open(at(other, "held"), O_RDWR | O_CREAT, 0644));
	for (size_t off = 0; off < mib << 20; off += sizeof big)
		if (write(fd, big, sizeof big) != (long)sizeof big)
			break;
	CHECK_ERR(umount(other), EBUSY);          /* open */
	close(fd);
	long held = shmem_kib();
	CHECK_OK(umount(other));
	long gone = shmem_kib();
	if (before >= 0)
		ut_check(held - gone >= (long)(mib << 10) * 3 / 4, __FILE__, __LINE__,
			 "Shmem shrank at unmount (%ld -> %ld kB)", held, gone);
	/* A fresh mount is empty. */
	CHECK_OK(do_mount(other, "size=8m"));
	struct stat st;
	CHECK_ERR(stat(at(other, "held"), &st), ENOENT);
	CHECK_OK(umount(other));
}

/* ---- names ---- */

static void test_links(void)
{
	struct stat st;
	CHECK_OK(ut_write_file(M("a"), "data", 4, 0644));
	CHECK_OK(link(M("a"), M("b")));
	CHECK_OK(stat(M("a"), &st));
	CHECK_EQ(st.st_nlink, 2);
	ino_t ino = st.st_ino;
	CHECK_OK(stat(M("b"), &st));
	CHECK_EQ(st.st_ino, ino);
	CHECK_OK(unlink(M("a")));
	CHECK_OK(stat(M("b"), &st));
	CHECK_EQ(st.st_nlink, 1);
	char buf[8];
	CHECK_EQ(ut_read_file(M("b"), buf, sizeof buf), 4);
	CHECK_ERR(link(M("b"), M("b")), EEXIST);
	CHECK_ERR(link(M("nosuch"), M("c")), ENOENT);
	CHECK_OK(mkdir(M("d"), 0755));
	CHECK_ERR(link(M("d"), M("d2")), EPERM);
	CHECK_ERR(link(M("b"), at(scratch, "x")), EXDEV);
	CHECK_ERR(link(M("b"), M("nosuch/x")), ENOENT);
	CHECK_ERR(link(M("b"), M("b/x")), ENOTDIR);
	/* A directory's link count: 2 plus its subdirectories. */
	CHECK_OK(stat(mnt, &st));
	nlink_t root = st.st_nlink;
	CHECK_OK(mkdir(M("d/s"), 0755));
	CHECK_OK(stat(M("d"), &st));
	CHECK_EQ(st.st_nlink, 3);
	CHECK_OK(stat(mnt, &st));
	CHECK_EQ(st.st_nlink, root);
	CHECK_ERR(rmdir(M("d")), ENOTEMPTY);
	CHECK_ERR(unlink(M("d")), EISDIR);
	CHECK_ERR(rmdir(M("b")), ENOTDIR);
	CHECK_ERR(rmdir(M("d/s/.")), EINVAL);
	CHECK_OK(rmdir(M("d/s")));
	CHECK_OK(stat(M("d"), &st));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_ERR(mkdir(M("d"), 0755), EEXIST);
	char longname[300];
	memset(longname, 'n', 256);
	longname[256] = 0;
	CHECK_ERR(open(M(longname), O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
	longname[255] = 0;
	int fd = CHECK_OK(open(M(longname), O_CREAT | O_WRONLY, 0644));   /* 255 fit */
	close(fd);
	CHECK_OK(unlink(M(longname)));
	CHECK_OK(rmdir(M("d")));
	CHECK_OK(unlink(M("b")));
}

static void rename_sticky(void *arg)
{
	(void)arg;
	CHECK_ERR(rename(M("sticky/roots"), M("sticky/mine")), EPERM);
	CHECK_ERR(rename(M("closed/f"), M("closed/g")), EACCES);       /* 0755, root's */
}

static void test_rename(void)
{
	struct stat st, st2;
	CHECK_OK(ut_write_file(M("f1"), "one", 3, 0644));
	CHECK_OK(ut_write_file(M("f2"), "two", 3, 0644));
	CHECK_OK(mkdir(M("d1"), 0755));
	CHECK_OK(mkdir(M("d2"), 0755));
	CHECK_OK(mkdir(M("full"), 0755));
	CHECK_OK(ut_write_file(M("full/x"), "x", 1, 0644));
	/* A plain move, and a file replacing a file (the old one's data stays
	 * for whoever has it open). */
	CHECK_OK(rename(M("f1"), M("g1")));
	CHECK_ERR(stat(M("f1"), &st), ENOENT);
	int old = CHECK_OK(open(M("f2"), O_RDONLY));
	CHECK_OK(rename(M("g1"), M("f2")));
	char buf[8] = { 0 };
	CHECK_EQ(ut_read_file(M("f2"), buf, sizeof buf), 3);
	CHECK_EQ(memcmp(buf, "one", 3), 0);
	CHECK_EQ(read(old, buf, sizeof buf), 3);
	CHECK_EQ(memcmp(buf, "two", 3), 0);
	CHECK_OK(fstat(old, &st));
	CHECK_EQ(st.st_nlink, 0);
	close(old);
	/* Two names of one file: nothing happens. */
	CHECK_OK(link(M("f2"), M("f3")));
	CHECK_OK(rename(M("f2"), M("f3")));
	CHECK_OK(stat(M("f2"), &st));
	CHECK_OK(stat(M("f3"), &st2));
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_OK(unlink(M("f3")));
	/* Directories: into another parent ("..", link counts), over an empty
	 * one, and every refusal. */
	CHECK_OK(mkdir(M("d1/sub"), 0755));
	CHECK_OK(rename(M("d1/sub"), M("d2/sub")));
	CHECK_OK(stat(M("d2/sub/.."), &st));
	CHECK_OK(stat(M("d2"), &st2));
	CHECK_EQ(st.st_ino, st2.st_ino);
	CHECK_EQ(st2.st_nlink, 3);
	CHECK_OK(stat(M("d1"), &st));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_OK(rename(M("d2/sub"), M("d1")));           /* over an empty directory */
	CHECK_ERR(stat(M("d2/sub"), &st), ENOENT);
	CHECK_OK(stat(M("d2"), &st));
	CHECK_EQ(st.st_nlink, 2);
	CHECK_ERR(rename(M("d1"), M("full")), ENOTEMPTY);
	CHECK_ERR(rename(M("f2"), M("d1")), EISDIR);
	CHECK_ERR(rename(M("d1"), M("f2")), ENOTDIR);
	CHECK_ERR(rename(M("d1"), M("d1/inside")), EINVAL);
	CHECK_OK(mkdir(M("d1/deep"), 0755));
	CHECK_ERR(rename(M("d1"), M("d1/deep/inside")), EINVAL);
	CHECK_ERR(rename(M("nosuch"), M("x")), ENOENT);
	CHECK_ERR(rename(M("f2"), M("nosuch/x")), ENOENT);
	CHECK_ERR(rename(M("f2"), M("f2/x")), ENOTDIR);
	CHECK_ERR(rename(M("f2/"), M("x")), ENOTDIR);
	CHECK_ERR(rename(M("f2"), at(scratch, "x")), EXDEV);
	CHECK_ERR(rename(M("d1/."), M("x")), EBUSY);
	CHECK_ERR(rename(M("d1"), M("d2/..")), EBUSY);
	CHECK_ERR(rename(mnt, at(scratch, "x")), EBUSY);  /* a mount point */
	char longname[300];
	memset(longname, 'n', 256);
	longname[256] = 0;
	CHECK_ERR(rename(M("f2"), M(longname)), ENAMETOOLONG);
	CHECK_OK(symlink("loop2", M("loop1")));
	CHECK_OK(symlink("loop1", M("loop2")));
	CHECK_ERR(rename(M("loop1/x"), M("x")), ELOOP);
	CHECK_OK(rename(M("loop1"), M("loop3")));         /* the link itself moves */
	CHECK_OK(lstat(M("loop3"), &st));
	CHECK(S_ISLNK(st.st_mode));
	unlink(M("loop2"));
	unlink(M("loop3"));
	/* Permissions: a sticky directory, and one without write permission. */
	CHECK_OK(mkdir(M("sticky"), 01777));
	CHECK_OK(chmod(M("sticky"), 01777));
	CHECK_OK(ut_write_file(M("sticky/roots"), "r", 1, 0666));
	CHECK_OK(mkdir(M("closed"), 0755));
	CHECK_OK(ut_write_file(M("closed/f"), "c", 1, 0666));
	ut_unprivileged("rename_sticky", rename_sticky, NULL);
	CHECK_OK(unlink(M("sticky/roots")));
	CHECK_OK(rmdir(M("sticky")));
	CHECK_OK(unlink(M("closed/f")));
	CHECK_OK(rmdir(M("closed")));
	CHECK_OK(rmdir(M("d1/deep")));
	CHECK_OK(rmdir(M("d1")));
	CHECK_OK(rmdir(M("d2")));
	CHECK_OK(unlink(M("full/x")));
	CHECK_OK(rmdir(M("full")));
	CHECK_OK(unlink(M("f2")));
}

/* ---- permissions, ownership, times ---- */

static void perms_child(void *arg)
{
	(void)arg;
	CHECK_ERR(open(M("private"), O_RDONLY), EACCES);
	CHECK_ERR(open(M("new"), O_WRONLY | O_CREAT, 0644), EACCES);
	CHECK_ERR(chmod(M("private"), 0777), EPERM);
	CHECK_ERR(chown(M("private"), UT_NOBODY, UT_NOBODY), EPERM);
	CHECK_ERR(unlink(M("private")), EACCES);
	CHECK_ERR(mknod(M("pub/dev"), S_IFCHR | 0600, makedev(1, 3)), EPERM);
	/* Its own files in a world-writable directory. */
	CHECK_OK(ut_write_file(M("pub/mine"), "m", 1, 0600));
	struct stat st;
	CHECK_OK(stat(M("pub/mine"), &st));
	CHECK_EQ(st.st_uid, UT_NOBODY);
	CHECK_EQ(st.st_gid, 4321);                 /* the set-group-ID directory's */
	CHECK_OK(chmod(M("pub/mine"), 0640));
	CHECK_ERR(unlink(M("pub/roots")), EPERM);   /* sticky */
	CHECK_OK(unlink(M("pub/mine")));
}

static void test_perms(void)
{
	struct stat st;
	CHECK_OK(chmod(mnt, 0755));
	CHECK_OK(ut_write_file(M("private"), "p", 1, 0600));
	CHECK_OK(mkdir(M("pub"), 0777));
	CHECK_OK(chown(M("pub"), 0, 4321));
	CHECK_OK(chmod(M("pub"), 03777));          /* sticky, set-group-ID */
	CHECK_OK(ut_write_file(M("pub/roots"), "r", 1, 0666));
	CHECK_OK(mkdir(M("pub/sub"), 0755));
	CHECK_OK(stat(M("pub/sub"), &st));
	CHECK_EQ(st.st_gid, 4321);
	CHECK(st.st_mode & S_ISGID);               /* inherited by a new directory */
	CHECK_OK(chown(M("private"), 77, 88));
	CHECK_OK(stat(M("private"), &st));
	CHECK(st.st_uid == 77 && st.st_gid == 88);
	CHECK_OK(chown(M("private"), 0, 0));
	ut_unprivileged("perms", perms_child, NULL);
	CHECK_OK(rmdir(M("pub/sub")));
	CHECK_OK(unlink(M("pub/roots")));
	CHECK_OK(rmdir(M("pub")));
	CHECK_OK(unlink(M("private")));
}

static void test_times(void)
{
	time_t start = time(NULL);
	CHECK_OK(ut_write_file(M("t"), "x", 1, 0644));
	struct stat st;
	CHECK_OK(stat(M("t"), &st));
	CHECK(st.st_mtime >= start - 1 && st.st_ctime >= start - 1 && st.st_atime >= start - 1);
	struct timeval tv[2] = { { 1000000, 0 }, { 2000000, 0 } };
	CHECK_OK(utimes(M("t"), tv));
	CHECK_OK(stat(M("t"), &st));
	CHECK_EQ(st.st_atime, 1000000);
	CHECK_EQ(st.st_mtime, 2000000);
	int fd = CHECK_OK(open(M("t"), O_WRONLY | O_APPEND));
	CHECK_EQ(write(fd, "y", 1), 1);
	close(fd);
	CHECK_OK(stat(M("t"), &st));
	CHECK(st.st_mtime >= start - 1);           /* the write moved it */
	char buf[4];
	CHECK_OK(utimes(M("t"), tv));
	CHECK_EQ(ut_read_file(M("t"), buf, sizeof buf), 2);
	CHECK_OK(stat(M("t"), &st));
	CHECK(st.st_atime >= start - 1);           /* relatime: older than mtime */
	/* A directory's times move with its entries. */
	CHECK_OK(utimes(mnt, tv));
	CHECK_OK(ut_write_file(M("t2"), "z", 1, 0644));
	CHECK_OK(stat(mnt, &st));
	CHECK(st.st_mtime >= start - 1 && st.st_ctime >= start - 1);
	CHECK_OK(unlink(M("t2")));
	CHECK_OK(unlink(M("t")));
}

/* ---- a large directory ---- */

static void test_bigdir(void)
{
	enum { N = 600 };
	CHECK_OK(mkdir(M("big"), 0755));
	char name[64];
	int made = 0;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "big/file-%d", i);
		int fd = open(M(name), O_WRONLY | O_CREAT | O_EXCL, 0644);
		made += fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	CHECK_EQ(made, N);
	struct stat st;
	CHECK_OK(stat(M("big/file-377"), &st));
	/* readdir sees each once, also while entries go: each even one read
	 * removes one not read yet (which a reader's buffer may still show). */
	enum { UNSEEN, SEEN, GONE, GONE_SEEN };
	static char state[N];
	memset(state, UNSEEN, sizeof state);
	DIR *d = opendir(M("big"));
	CHECK(d != NULL);
	int dup = 0, dots = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
			dots++;
			continue;
		}
		int i = atoi(e->d_name + 5);
		if (i < 0 || i >= N)
			continue;
		dup += state[i] == SEEN || state[i] == GONE_SEEN;
		state[i] = state[i] == GONE ? GONE_SEEN : SEEN;
		if (i % 2 == 0 && state[N - 1 - i] == UNSEEN) {
			snprintf(name, sizeof name, "big/file-%d", N - 1 - i);
			if (unlink(M(name)) == 0)
				state[N - 1 - i] = GONE;
		}
	}
	if (d)
		closedir(d);
	CHECK_EQ(dup, 0);
	CHECK_EQ(dots, 2);
	int missed = 0;
	for (int i = 0; i < N; i++)
		missed += state[i] == UNSEEN;
	CHECK_EQ(missed, 0);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "big/file-%d", i);
		if (state[i] == SEEN)
			CHECK_OK(unlink(M(name)));
	}
	CHECK_OK(rmdir(M("big")));
}

/* ---- unmount, and a program run from tmpfs ---- */

static void test_unmount_busy(void)
{
	CHECK_OK(do_mount(other, NULL));
	CHECK_OK(mkdir(at(other, "in"), 0755));
	char cwd[PATH_MAX / 2], o[PATH_MAX / 2 + 8];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	snprintf(o, sizeof o, "%s/%s", cwd, other);
	CHECK_OK(chdir(at(other, "in")));
	CHECK_ERR(umount(o), EBUSY);               /* a working directory inside */
	/* A directory removed while it is the working directory. */
	CHECK_OK(rmdir(at(o, "in")));
	CHECK_ERR(open("new", O_CREAT | O_WRONLY, 0644), ENOENT);
	CHECK_ERR(mkdir("sub", 0755), ENOENT);
	CHECK_OK(chdir(cwd));
	CHECK_OK(umount(other));
	CHECK_ERR(umount(other), EINVAL);          /* no longer a mount point */
}

static void test_exec(void)
{
	int in = open(ut_self, O_RDONLY);
	if (in < 0) {
		ut_note("skipped the program from tmpfs: cannot open %s", ut_self);
		return;
	}
	int out = CHECK_OK(open(M("prog"), O_WRONLY | O_CREAT | O_TRUNC, 0755));
	static char chunk[65536];
	long n;
	while ((n = read(in, chunk, sizeof chunk)) > 0)
		if (write(out, chunk, n) != n)
			break;
	close(in);
	close(out);
	pid_t pid = fork();
	if (pid == 0) {
		execl(M("prog"), "prog", "--exit-with", "7", (char *)NULL);
		_exit(99);
	}
	int status = ut_wait(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	CHECK_OK(unlink(M("prog")));
}

static void all_tests(void *arg)
{
	(void)arg;
	if (!on_tempest()) {
		/* A mount namespace of our own, nothing propagating out. */
		if (unshare(CLONE_NEWNS) != 0 ||
		    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
			ut_note("skipped: no mount namespace (%s)", strerror(errno));
			return;
		}
	}
	if (do_mount(mnt, "size=16m") != 0) {
		ut_check(0, __FILE__, __LINE__, "mount tmpfs on %s: %s", mnt, strerror(errno));
		return;
	}
	test_options();
	test_types();
	test_data();
	test_truncate();
	test_mmap();
	test_enospc();
	test_sparse();
	test_memory();
	test_links();
	test_rename();
	test_perms();
	test_times();
	test_bigdir();
	test_unmount_busy();
	test_exec();
	CHECK_OK(umount(mnt));
}

/* /dev/shm, as on every Linux system: a world-writable sticky tmpfs where
 * shm_open and sem_open keep POSIX shared memory and named semaphores
 * (Python's multiprocessing needs it). */
static void test_dev_shm(void)
{
	struct statfs fs;
	struct stat st;
	CHECK_OK(statfs("/dev/shm", &fs));
	CHECK_EQ(fs.f_type, TMPFS_MAGIC);
	CHECK_OK(stat("/dev/shm", &st));
	CHECK_EQ(st.st_mode & 07777, 01777);
	char name[64];
	snprintf(name, sizeof name, "/t_tmpfs.%d", (int)getpid());
	int fd = CHECK_OK(shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600));
	CHECK_OK(ftruncate(fd, 4096));
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		strcpy(p, "shared");
		int again = CHECK_OK(shm_open(name, O_RDONLY, 0));
		char b[8] = { 0 };
		CHECK_EQ(pread(again, b, 6, 0), 6);
		CHECK_EQ(memcmp(b, "shared", 6), 0);
		close(again);
		munmap(p, 4096);
	}
	close(fd);
	CHECK_OK(shm_unlink(name));
	CHECK_ERR(shm_open(name, O_RDONLY, 0), ENOENT);
	sem_t *sem = sem_open(name, O_CREAT | O_EXCL, 0600, 1);
	CHECK(sem != SEM_FAILED);
	if (sem != SEM_FAILED) {
		CHECK_OK(sem_wait(sem));
		CHECK_ERR(sem_trywait(sem), EAGAIN);
		CHECK_OK(sem_post(sem));
		sem_close(sem);
		CHECK_OK(sem_unlink(name));
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--exit-with"))
		return atoi(argv[2]);              /* test_exec's run from tmpfs */
	ut_init(argc, argv);
	ut_alarm(120);
	ut_scratch();
	CHECK_OK(mkdir(mnt, 0755));
	CHECK_OK(mkdir(other, 0755));
	if (on_tempest()) {
		struct statfs s;
		CHECK_OK(statfs("/tmp", &s));
		CHECK_EQ(s.f_type, TMPFS_MAGIC);   /* the images mount /tmp on tmpfs */
	}
	test_dev_shm();
	if (!ut_is_root())
		ut_note("skipped: mounting needs root");
	else
		ut_child("tmpfs", all_tests, NULL, 0);
	return ut_done();
}
