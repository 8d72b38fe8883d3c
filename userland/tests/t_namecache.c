/*
 * t_namecache: a name looked up and not found, then made, is found.
 *
 * A kernel that remembers failed lookups (Tempest's DNLC keeps negative
 * entries, Linux's dcache negative dentries) must forget one whenever the
 * name comes into being, however it does: open with O_CREAT, mkdir, link,
 * symlink, mkfifo, mknod, rename onto the name, and bind of an AF_UNIX
 * socket.  For each, the name is looked up twice while absent (the second
 * answer may come from the cache), made, found with the right type, then
 * removed, not found again, and made once more with O_CREAT | O_EXCL.  A
 * name missed by an unprivileged user, then made by root, is found by
 * that user (the cache keys entries by credential).  A long name (past
 * the cache's limit, where the file system allows one) and a name missed
 * in a directory that is then removed and made again behave the same.
 */
#include "ut.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

/* The file type of path, or -errno. */
static int type_of(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return -errno;
	return (int)(st.st_mode & S_IFMT);
}

/* Twice absent, so that the second lookup may be answered from a cache. */
static void check_absent(const char *name)
{
	CHECK_EQ(type_of(name), -ENOENT);
	CHECK_EQ(type_of(name), -ENOENT);
	CHECK_ERR(open(name, O_RDONLY), ENOENT);
}

static int make_file(const char *name)
{
	int fd = open(name, O_CREAT | O_WRONLY | O_EXCL, 0644);
	return fd < 0 ? -1 : close(fd);
}

static int make_dir(const char *name) { return mkdir(name, 0755); }
static int make_link(const char *name) { return link("target", name); }
static int make_symlink(const char *name) { return symlink("target", name); }
static int make_fifo(const char *name) { return mkfifo(name, 0644); }
static int make_node(const char *name) { return mknod(name, S_IFREG | 0644, 0); }

static int make_by_rename(const char *name)
{
	int fd = open("renamed-from", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return rename("renamed-from", name);
}

static int make_socket(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s", name);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0)
		return -1;
	int r = bind(s, (struct sockaddr *)&a, sizeof a);
	close(s);
	return r;
}

struct maker {
	const char *name;
	int (*make)(const char *name);
	int type;
};

static const struct maker makers[] = {
	{ "nc-creat", make_file, S_IFREG },
	{ "nc-mkdir", make_dir, S_IFDIR },
	{ "nc-link", make_link, S_IFREG },
	{ "nc-symlink", make_symlink, S_IFLNK },
	{ "nc-fifo", make_fifo, S_IFIFO },
	{ "nc-mknod", make_node, S_IFREG },
	{ "nc-rename", make_by_rename, S_IFREG },
	{ "nc-socket", make_socket, S_IFSOCK },
};

/* Past the 31 bytes Tempest's DNLC caches (where names may be that long:
 * S5 keeps 14). */
static const struct maker long_name = {
	"nc-a-name-longer-than-any-cache-keeps", make_file, S_IFREG
};

static int remove_any(const char *name)
{
	return type_of(name) == S_IFDIR ? rmdir(name) : unlink(name);
}

static void check_maker(const struct maker *m)
{
	check_absent(m->name);
	if (CHECK_OK(m->make(m->name)) != 0)
		return;
	CHECK_EQ(type_of(m->name), m->type);
	CHECK_OK(remove_any(m->name));
	check_absent(m->name);
	CHECK_OK(make_file(m->name));
	CHECK_EQ(type_of(m->name), S_IFREG);
	CHECK_OK(unlink(m->name));
}

/* Another user misses the name; root makes it; that user finds it. */
static void nobody_misses(void *arg)
{
	CHECK_EQ(type_of(arg), -ENOENT);
	CHECK_EQ(type_of(arg), -ENOENT);
}

static void nobody_finds(void *arg)
{
	CHECK_EQ(type_of(arg), S_IFREG);
}

static void check_other_user(void)
{
	const char *name = "nc-other-user";
	if (!ut_unprivileged("nobody misses the name", nobody_misses, (void *)name))
		return;
	CHECK_OK(make_file(name));
	ut_unprivileged("nobody finds it once made", nobody_finds, (void *)name);
	CHECK_OK(unlink(name));
}

/* A name missed in a directory, then the directory removed and made
 * again under the same name: the new directory does not inherit it. */
static void check_directory_again(void)
{
	CHECK_OK(mkdir("nc-d", 0755));
	check_absent("nc-d/inner");
	CHECK_OK(rmdir("nc-d"));
	CHECK_EQ(type_of("nc-d/inner"), -ENOENT);
	CHECK_OK(mkdir("nc-d", 0755));
	check_absent("nc-d/inner");
	CHECK_OK(make_file("nc-d/inner"));
	CHECK_EQ(type_of("nc-d/inner"), S_IFREG);
	CHECK_OK(unlink("nc-d/inner"));
	CHECK_OK(rmdir("nc-d"));
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	ut_scratch();
	CHECK_OK(make_file("target"));
	for (size_t i = 0; i < sizeof makers / sizeof makers[0]; i++)
		check_maker(&makers[i]);
	struct statfs sf;
	CHECK_OK(statfs(".", &sf));
	if ((size_t)sf.f_namelen >= strlen(long_name.name))
		check_maker(&long_name);
	check_other_user();
	check_directory_again();
	CHECK_OK(unlink("target"));
	return ut_done();
}
