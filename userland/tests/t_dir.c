/*
 * t_dir: the name space.
 *
 * mkdir, rmdir, link, unlink, unlinkat, rename, renameat, symlink, readlink,
 * getdents64 (raw: musl has no wrapper by that name), getcwd, chdir, fchdir,
 * with their error cases; EACCES/EPERM as uid 65534.
 */
#include "ut.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static nlink_t links(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? st.st_nlink : (nlink_t)-1;
}

static ino_t inode(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? st.st_ino : 0;
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static void test_mkdir_rmdir(void)
{
	nlink_t before = links(".");
	CHECK_OK(mkdir("d", 0755));
	CHECK_EQ(links("."), before + 1); /* the new d/.. */
	CHECK_EQ(links("d"), 2);
	CHECK_ERR(mkdir("d", 0755), EEXIST);
	CHECK_OK(ut_write_file("f", "x", 1, 0644));
	CHECK_ERR(mkdir("f", 0755), EEXIST);
	CHECK_ERR(mkdir("none/d", 0755), ENOENT);
	CHECK_ERR(mkdir("f/d", 0755), ENOTDIR);
	CHECK_ERR(mkdir("", 0755), ENOENT);
	CHECK_ERR(mkdir(UT_BADPTR, 0755), EFAULT);
	CHECK_OK(mkdir("d/sub/", 0755)); /* a trailing slash is fine */
	CHECK_EQ(links("d"), 3);
	CHECK_OK(ut_write_file("d/sub/file", "x", 1, 0644));

	CHECK_ERR(rmdir("d"), ENOTEMPTY);
	CHECK_ERR(rmdir("d/sub"), ENOTEMPTY);
	CHECK_ERR(rmdir("f"), ENOTDIR);
	CHECK_ERR(rmdir("missing"), ENOENT);
	CHECK_ERR(rmdir("."), EINVAL);
	CHECK_ERR(rmdir("d/."), EINVAL);
	CHECK_ERR(rmdir("d/sub/.."), ENOTEMPTY);
	CHECK_ERR(rmdir("/"), EBUSY);
	CHECK_ERR(rmdir(UT_BADPTR), EFAULT);
	CHECK_OK(unlink("d/sub/file"));
	CHECK_OK(rmdir("d/sub"));
	CHECK(!exists("d/sub"));
	CHECK_EQ(links("d"), 2);
	CHECK_OK(rmdir("d"));
	CHECK_EQ(links("."), before);
	CHECK_OK(unlink("f"));
}

static void test_link_unlink(void)
{
	CHECK_OK(ut_write_file("orig", "12345", 5, 0644));
	CHECK_OK(link("orig", "hard"));
	CHECK_EQ(links("orig"), 2);
	CHECK_EQ(inode("orig"), inode("hard"));
	CHECK_ERR(link("orig", "hard"), EEXIST);
	CHECK_ERR(link("missing", "x"), ENOENT);
	CHECK_ERR(link("orig", "none/x"), ENOENT);
	CHECK_ERR(link("orig/x", "y"), ENOTDIR);
	CHECK_OK(mkdir("dir", 0755));
	CHECK_ERR(link("dir", "dirlink"), EPERM);
	CHECK_ERR(link(UT_BADPTR, "x"), EFAULT);
	CHECK_ERR(link("orig", UT_KERNPTR), EFAULT);
	/* link does not follow a symbolic link: it links the link. */
	CHECK_OK(symlink("nowhere", "dangling"));
	CHECK_OK(link("dangling", "dangling2"));
	struct stat st;
	CHECK_OK(lstat("dangling2", &st));
	CHECK(S_ISLNK(st.st_mode));

	int fd = CHECK_OK(open("hard", O_RDONLY));
	CHECK_OK(unlink("orig"));
	CHECK_EQ(links("hard"), 1);
	CHECK_OK(unlink("hard"));
	CHECK(!exists("hard"));
	/* The open file lives on with no names. */
	CHECK_OK(fstat(fd, &st));
	CHECK_EQ(st.st_nlink, 0);
	char buf[8];
	CHECK_EQ(read(fd, buf, 8), 5);
	close(fd);

	CHECK_ERR(unlink("hard"), ENOENT);
	CHECK_ERR(unlink("dir"), EISDIR); /* Linux: EISDIR, not POSIX's EPERM */
	CHECK_OK(ut_write_file("plain", "", 0, 0644));
	CHECK_ERR(unlink("plain/x"), ENOTDIR);
	CHECK_ERR(unlink("dangling/x"), ENOENT);
	CHECK_OK(unlink("plain"));
	CHECK_ERR(unlink(""), ENOENT);
	CHECK_ERR(unlink(UT_BADPTR), EFAULT);
	CHECK_OK(unlink("dangling"));
	CHECK_OK(unlink("dangling2"));

	int dfd = CHECK_OK(open("dir", O_RDONLY | O_DIRECTORY));
	CHECK_OK(ut_write_file("dir/a", "", 0, 0644));
	CHECK_OK(mkdirat(dfd, "sub", 0755));
	CHECK_ERR(unlinkat(dfd, "sub", 0), EISDIR);
	CHECK_ERR(unlinkat(dfd, "a", AT_REMOVEDIR), ENOTDIR);
	CHECK_ERR(unlinkat(dfd, "a", 0x1234), EINVAL);
	CHECK_ERR(unlinkat(dfd, "zz", 0), ENOENT);
	CHECK_ERR(unlinkat(-3, "a", 0), EBADF);
	CHECK_OK(unlinkat(dfd, "a", 0));
	CHECK_OK(unlinkat(dfd, "sub", AT_REMOVEDIR));
	CHECK(!exists("dir/a") && !exists("dir/sub"));
	CHECK_OK(unlinkat(AT_FDCWD, "dir", AT_REMOVEDIR));
	CHECK_ERR(unlinkat(dfd, "a", 0), ENOENT); /* in a removed directory */
	close(dfd);
}

static void test_rename(void)
{
	CHECK_OK(ut_write_file("r1", "one", 3, 0644));
	ino_t ino = inode("r1");
	CHECK_OK(rename("r1", "r2"));
	CHECK(!exists("r1"));
	CHECK_EQ(inode("r2"), ino);
	/* Over an existing file: replaced. */
	CHECK_OK(ut_write_file("r3", "three", 5, 0644));
	CHECK_OK(rename("r2", "r3"));
	CHECK(!exists("r2"));
	CHECK_EQ(inode("r3"), ino);
	char buf[8] = { 0 };
	CHECK_EQ(ut_read_file("r3", buf, 8), 3);
	/* Onto itself, or onto another link of the same file: nothing. */
	CHECK_OK(rename("r3", "r3"));
	CHECK_OK(link("r3", "r4"));
	CHECK_OK(rename("r3", "r4"));
	CHECK(exists("r3") && exists("r4"));
	CHECK_OK(unlink("r4"));

	CHECK_OK(mkdir("da", 0755));
	CHECK_OK(mkdir("db", 0755));
	CHECK_OK(mkdir("dc", 0755));
	CHECK_OK(ut_write_file("dc/x", "", 0, 0644));
	CHECK_OK(ut_write_file("da/in", "", 0, 0644));
	CHECK_ERR(rename("r3", "da"), EISDIR);
	CHECK_ERR(rename("da", "r3"), ENOTDIR);
	CHECK_ERR(rename("da", "dc"), ENOTEMPTY);
	CHECK_ERR(rename("da", "da/sub"), EINVAL);
	CHECK_ERR(rename("missing", "x"), ENOENT);
	CHECK_ERR(rename("r3", "none/x"), ENOENT);
	CHECK_ERR(rename("r3/x", "y"), ENOTDIR);
	CHECK_ERR(rename(".", "x"), EBUSY);
	CHECK_ERR(rename(UT_BADPTR, "x"), EFAULT);
	CHECK_ERR(rename("r3", UT_KERNPTR), EFAULT);
	/* A directory over an empty one, and its .. follows it. */
	nlink_t before = links(".");
	CHECK_OK(mkdir("dc/deep", 0755));
	CHECK_OK(rename("da", "db"));
	CHECK(!exists("da") && exists("db/in"));
	CHECK_EQ(links("."), before - 1);
	CHECK_OK(rename("db", "dc/deep/moved"));
	CHECK_EQ(links("dc/deep"), 3);
	CHECK_EQ(inode("dc/deep/moved/.."), inode("dc/deep"));
	CHECK(exists("dc/deep/moved/in"));

	CHECK_OK(mkdir("ra", 0755));
	CHECK_OK(mkdir("rb", 0755));
	int a = CHECK_OK(open("ra", O_RDONLY | O_DIRECTORY));
	int b = CHECK_OK(open("rb", O_RDONLY | O_DIRECTORY));
	CHECK_OK(ut_write_file("ra/f", "f", 1, 0644));
	CHECK_OK(renameat(a, "f", b, "g"));
	CHECK(!exists("ra/f") && exists("rb/g"));
	CHECK_OK(renameat(b, "g", AT_FDCWD, "top"));
	CHECK(exists("top"));
	CHECK_ERR(renameat(-1, "top", b, "x"), EBADF);
	CHECK_ERR(renameat(AT_FDCWD, "top", 4444, "x"), EBADF);
	CHECK_ERR(renameat(a, "nothing", b, "x"), ENOENT);
	close(a);
	close(b);
}

static void test_symlink(void)
{
	CHECK_OK(mkdir("sd", 0755));
	CHECK_OK(ut_write_file("sd/file", "payload", 7, 0644));
	CHECK_OK(symlink("sd", "to_dir"));
	CHECK_OK(symlink("sd/file", "to_file"));
	char buf[64] = { 0 };
	CHECK_EQ(ut_read_file("to_dir/file", buf, sizeof buf), 7);
	CHECK(memcmp(buf, "payload", 7) == 0);
	CHECK_EQ(ut_read_file("to_file", buf, sizeof buf), 7);

	memset(buf, 'Z', sizeof buf);
	CHECK_EQ(readlink("to_file", buf, sizeof buf), 7);
	CHECK(memcmp(buf, "sd/file", 7) == 0);
	CHECK_EQ(buf[7], 'Z'); /* no terminating NUL is written */
	CHECK_EQ(readlink("to_file", buf, 3), 3); /* silently truncated */
	CHECK(memcmp(buf, "sd/", 3) == 0);
	CHECK_ERR(readlink("sd/file", buf, sizeof buf), EINVAL);
	CHECK_ERR(readlink("sd", buf, sizeof buf), EINVAL);
	CHECK_ERR(readlink("missing", buf, sizeof buf), ENOENT);
	/* musl hides this one (it reads into a dummy byte): ask the kernel. */
	CHECK_ERR(syscall(SYS_readlink, "to_file", buf, 0), EINVAL);
	CHECK_EQ(syscall(SYS_readlink, "to_file", buf, sizeof buf), 7);
	CHECK_ERR(readlink("to_file", UT_BADPTR, 10), EFAULT);
	CHECK_ERR(readlink(UT_BADPTR, buf, 10), EFAULT);
	CHECK_ERR(readlink("to_file/x", buf, 10), ENOTDIR);
	CHECK_EQ(readlinkat(AT_FDCWD, "to_dir", buf, sizeof buf), 2);

	CHECK_ERR(symlink("anything", "to_file"), EEXIST);
	CHECK_ERR(symlink("anything", "sd"), EEXIST);
	CHECK_ERR(symlink("anything", "none/x"), ENOENT);
	CHECK_ERR(symlink("", "empty"), ENOENT);
	CHECK_ERR(symlink(UT_BADPTR, "x"), EFAULT);
	CHECK_ERR(symlink("x", UT_BADPTR), EFAULT);

	/* A loop ends in ELOOP; a link into a file ends in ENOTDIR. */
	CHECK_OK(symlink("loop2", "loop1"));
	CHECK_OK(symlink("loop1", "loop2"));
	struct stat st;
	CHECK_ERR(stat("loop1", &st), ELOOP);
	CHECK_ERR(open("loop1", O_RDONLY), ELOOP);
	CHECK_OK(lstat("loop1", &st));
	CHECK_ERR(stat("to_file/x", &st), ENOTDIR);
	CHECK_ERR(open("to_file", O_RDONLY | O_NOFOLLOW), ELOOP);
	/* A long target is kept whole. */
	char target[300];
	memset(target, 'a', sizeof target - 1);
	target[sizeof target - 1] = 0;
	for (int i = 50; i < 290; i += 50)
		target[i] = '/';
	CHECK_OK(symlink(target, "longlink"));
	char back[400];
	CHECK_EQ(readlink("longlink", back, sizeof back), 299);
	CHECK(memcmp(back, target, 299) == 0);
	CHECK_OK(lstat("longlink", &st));
	CHECK_EQ(st.st_size, 299);
}

/* Reads a directory with getdents64 in small gulps; counts the names. */
static int list_dir(int fd, size_t bufsize, char names[][16], int max,
		    unsigned char *types)
{
	char *buf = malloc(bufsize);
	int n = 0;
	long r;
	while ((r = syscall(SYS_getdents64, fd, buf, bufsize)) > 0) {
		for (long off = 0; off < r;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			if (d->d_reclen == 0 || d->d_reclen > r - off) {
				n = -1000;
				break;
			}
			if (n >= 0 && n < max) {
				snprintf(names[n], 16, "%s", d->d_name);
				types[n] = d->d_type;
			}
			n++;
			off += d->d_reclen;
		}
	}
	free(buf);
	return r < 0 ? -1 : n;
}

static void test_getdents(void)
{
	enum { NFILES = 120 };
	CHECK_OK(mkdir("gd", 0755));
	char path[64];
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof path, "gd/file%03d", i);
		CHECK(ut_write_file(path, "", 0, 0644) == 0);
	}
	CHECK_OK(mkdir("gd/subdir", 0755));
	CHECK_OK(symlink("file000", "gd/link"));
	int fd = CHECK_OK(open("gd", O_RDONLY | O_DIRECTORY));
	static char names[NFILES + 10][16];
	unsigned char types[NFILES + 10];
	int n = list_dir(fd, 200, names, NFILES + 10, types);
	CHECK_EQ(n, NFILES + 4); /* . .. subdir link */
	int seen[NFILES] = { 0 }, dot = 0, dotdot = 0, sub = 0, lnk = 0;
	int dup_or_bad = 0;
	for (int i = 0; i < n && i < NFILES + 10; i++) {
		int k;
		if (!strcmp(names[i], "."))
			dot += types[i] == DT_DIR;
		else if (!strcmp(names[i], ".."))
			dotdot += types[i] == DT_DIR;
		else if (!strcmp(names[i], "subdir"))
			sub += types[i] == DT_DIR;
		else if (!strcmp(names[i], "link"))
			lnk += types[i] == DT_LNK;
		else if (sscanf(names[i], "file%d", &k) == 1 && k >= 0 &&
			 k < NFILES && types[i] == DT_REG)
			seen[k]++;
		else
			dup_or_bad++;
	}
	int all_once = 1;
	for (int i = 0; i < NFILES; i++)
		all_once &= seen[i] == 1;
	CHECK(all_once);
	CHECK(dot == 1 && dotdot == 1 && sub == 1 && lnk == 1);
	CHECK_EQ(dup_or_bad, 0);
	char buf[512];
	CHECK_EQ(syscall(SYS_getdents64, fd, buf, sizeof buf), 0); /* the end */
	/* Rewinding starts over; a removed name is gone. */
	CHECK_OK(unlink("gd/file007"));
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(list_dir(fd, 4096, names, NFILES + 10, types), NFILES + 3);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_ERR(syscall(SYS_getdents64, fd, buf, 1), EINVAL);
	CHECK_ERR(syscall(SYS_getdents64, fd, UT_BADPTR, 4096), EFAULT);
	CHECK_ERR(syscall(SYS_getdents64, fd, UT_KERNPTR, 4096), EFAULT);
	close(fd);
	CHECK_ERR(syscall(SYS_getdents64, fd, buf, sizeof buf), EBADF);
	fd = CHECK_OK(open("gd/file001", O_RDONLY));
	CHECK_ERR(syscall(SYS_getdents64, fd, buf, sizeof buf), ENOTDIR);
	close(fd);
	/* An empty directory has just . and .. */
	CHECK_OK(mkdir("empty", 0755));
	fd = CHECK_OK(open("empty", O_RDONLY | O_DIRECTORY));
	CHECK_EQ(list_dir(fd, 4096, names, NFILES, types), 2);
	close(fd);
}

static void test_cwd(void)
{
	char start[PATH_MAX], buf[PATH_MAX];
	CHECK(getcwd(start, sizeof start) != NULL);
	CHECK(start[0] == '/');
	CHECK_OK(mkdir("cw", 0755));
	CHECK_OK(mkdir("cw/in", 0755));
	CHECK_OK(chdir("cw"));
	CHECK(getcwd(buf, sizeof buf) != NULL);
	size_t n = strlen(start);
	CHECK(strncmp(buf, start, n) == 0 && strcmp(buf + n, "/cw") == 0);
	/* The raw call returns the length with its NUL, not a pointer. */
	CHECK_EQ(syscall(SYS_getcwd, buf, sizeof buf), n + 4);
	CHECK_ERR(syscall(SYS_getcwd, buf, n + 3), ERANGE);
	CHECK_ERR(syscall(SYS_getcwd, buf, 0), ERANGE);
	errno = 0;
	CHECK(getcwd(buf, 2) == NULL && errno == ERANGE);
	CHECK_ERR(syscall(SYS_getcwd, UT_BADPTR, sizeof buf), EFAULT);
	CHECK_ERR(syscall(SYS_getcwd, UT_KERNPTR, sizeof buf), EFAULT);
	CHECK_OK(chdir("in/../.."));
	CHECK(getcwd(buf, sizeof buf) != NULL && strcmp(buf, start) == 0);

	CHECK_OK(ut_write_file("cwfile", "", 0, 0644));
	CHECK_ERR(chdir("cwfile"), ENOTDIR);
	CHECK_ERR(chdir("nothing"), ENOENT);
	CHECK_ERR(chdir(""), ENOENT);
	CHECK_ERR(chdir(UT_BADPTR), EFAULT);

	int dfd = CHECK_OK(open("cw/in", O_RDONLY | O_DIRECTORY));
	int home = CHECK_OK(open(".", O_RDONLY));
	CHECK_OK(fchdir(dfd));
	CHECK(getcwd(buf, sizeof buf) != NULL);
	CHECK(strlen(buf) > 6 && strcmp(buf + strlen(buf) - 6, "/cw/in") == 0);
	CHECK_OK(fchdir(home));
	CHECK(getcwd(buf, sizeof buf) != NULL && strcmp(buf, start) == 0);
	int ffd = CHECK_OK(open("cwfile", O_RDONLY));
	CHECK_ERR(fchdir(ffd), ENOTDIR);
	close(ffd);
	CHECK_ERR(fchdir(-1), EBADF);
	CHECK_ERR(fchdir(12345), EBADF);

	/* A removed working directory: getcwd fails, relative names miss. */
	CHECK_OK(mkdir("gone", 0755));
	CHECK_OK(chdir("gone"));
	CHECK_OK(rmdir("../gone"));
	CHECK_ERR(syscall(SYS_getcwd, buf, sizeof buf), ENOENT);
	CHECK_ERR(open("newfile", O_WRONLY | O_CREAT, 0644), ENOENT);
	CHECK_OK(fchdir(home));
	close(home);
	close(dfd);
}

/* Run as uid 65534 in the scratch directory, which root owns. */
static void unprivileged(void *arg)
{
	CHECK_ERR(mkdir("ro/new", 0755), EACCES);
	CHECK_ERR(rmdir("ro/sub"), EACCES);
	CHECK_ERR(unlink("ro/file"), EACCES);
	CHECK_OK(ut_write_file("pub/mine", "", 0, 0644));
	CHECK_ERR(link("pub/mine", "ro/file2"), EACCES);
	CHECK_ERR(symlink("x", "ro/sym"), EACCES);
	CHECK_ERR(rename("ro/file", "ro/file3"), EACCES);
	CHECK_ERR(rename("ro/file", "pub/file3"), EACCES);
	CHECK_ERR(chdir("closed"), EACCES);
	CHECK_ERR(mkdir("closed/x", 0755), EACCES);
	/* A name that exists is EEXIST before the directory's write
	   permission is asked (Linux's order; `mkdir -p` and PostgreSQL's
	   initdb go on at EEXIST for each ancestor). */
	CHECK_ERR(mkdir("ro/sub", 0755), EEXIST);
	CHECK_ERR(mkdir("ro/file", 0755), EEXIST);
	CHECK_ERR(symlink("x", "ro/file"), EEXIST);
	CHECK_ERR(link("pub/mine", "ro/file"), EEXIST);
	/* Sticky /tmp rule: another user's file in a sticky directory. */
	CHECK_ERR(unlink("sticky/rootfile"), EPERM);
	CHECK_ERR(rename("sticky/rootfile", "sticky/mine"), EPERM);
	CHECK_OK(ut_write_file("sticky/own", "", 0, 0644));
	CHECK_OK(unlink("sticky/own"));
	/* Writable directory: everything works. */
	CHECK_OK(mkdir("pub/d", 0755));
	CHECK_OK(symlink("d", "pub/s"));
	CHECK_OK(rename("pub/d", "pub/e"));
	CHECK_OK(rmdir("pub/e"));
	CHECK_OK(unlink("pub/s"));
	CHECK_OK(unlink("pub/mine"));
	/* Hard-linking root's file depends on Linux's protected_hardlinks
	   setting (EPERM when on), so it is not tested. */
}

static void test_permissions(void)
{
	CHECK_OK(mkdir("ro", 0755));
	CHECK_OK(mkdir("ro/sub", 0755));
	CHECK_OK(ut_write_file("ro/file", "", 0, 0644));
	CHECK_OK(mkdir("pub", 0777));
	CHECK_OK(chmod("pub", 0777));
	CHECK_OK(mkdir("closed", 0700));
	CHECK_OK(mkdir("sticky", 0755));
	CHECK_OK(chmod("sticky", 01777));
	CHECK_OK(ut_write_file("sticky/rootfile", "", 0, 0644));
	ut_unprivileged("permissions", unprivileged, NULL);
	CHECK(exists("ro/file") && exists("sticky/rootfile"));
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	umask(022);
	test_mkdir_rmdir();
	test_link_unlink();
	test_rename();
	test_symlink();
	test_getdents();
	test_cwd();
	test_permissions();
	return ut_done();
}
