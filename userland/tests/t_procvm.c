/*
 * t_procvm: process_vm_readv and process_vm_writev on a child, as Linux
 * answers them.
 *
 * Reading a child's string and writing into its buffer (the child checks
 * what arrived), vectors split differently on the two sides, a transfer
 * that runs from a page into a PROT_NONE one (what moved before
 * it), a remote address with nothing mapped (EFAULT), a read-only remote
 * mapping written (EFAULT), a child's copy-on-write page written (the
 * parent's copy unchanged), the checks (flags EINVAL, too many elements
 * EINVAL, an empty local vector 0, an unknown pid ESRCH, a bad local
 * vector EFAULT) and, as root, another user refused (EPERM).
 */
#include "ut.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char shared_text[64] = "copy-on-write original";

struct layout {
	char *text;     /* "hello from the child" */
	char *buf;      /* 64 bytes the parent writes */
	char *edge;     /* the last 8 bytes of a page followed by a hole */
	char *ro;       /* a read-only page */
	char *cow;      /* shared_text in the child */
};

static long rd(pid_t pid, struct iovec *l, int ln, struct iovec *r, int rn)
{
	return syscall(SYS_process_vm_readv, pid, l, ln, r, rn, 0);
}

static long wr(pid_t pid, struct iovec *l, int ln, struct iovec *r, int rn)
{
	return syscall(SYS_process_vm_writev, pid, l, ln, r, rn, 0);
}

/* The child: set up, report its layout, wait for "go", check, exit. */
static void child(int to_parent, int from_parent)
{
	long page = sysconf(_SC_PAGESIZE);
	struct layout l;
	l.text = strdup("hello from the child");
	l.buf = calloc(1, 64);
	char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(two + page, page, PROT_NONE);   /* a hole nothing else is put in */
	memcpy(two + page - 8, "edgebyte", 8);
	l.edge = two + page - 8;
	l.ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	l.cow = shared_text;
	if (write(to_parent, &l, sizeof l) != sizeof l)
		_exit(2);
	char go;
	if (read(from_parent, &go, 1) != 1)
		_exit(3);
	int ok = strcmp(l.buf, "written by the parent") == 0 &&
		 strcmp(shared_text, "changed in the child") == 0;
	_exit(ok ? 0 : 1);
}

static void check_child(void)
{
	int up[2], down[2];
	CHECK_OK(pipe(up));
	CHECK_OK(pipe(down));
	pid_t pid = fork();
	if (pid == 0) {
		child(up[1], down[0]);
		_exit(4);
	}
	struct layout l;
	CHECK_EQ(read(up[0], &l, sizeof l), sizeof l);

	char got[32] = { 0 };
	struct iovec lo = { got, 20 }, re = { l.text, 20 };
	CHECK_EQ(rd(pid, &lo, 1, &re, 1), 20);
	CHECK(memcmp(got, "hello from the child", 20) == 0);

	/* Two local pieces against three remote ones. */
	char a[7] = { 0 }, b[14] = { 0 };
	struct iovec l2[2] = { { a, 6 }, { b, 14 } };
	struct iovec r3[3] = { { l.text, 5 }, { l.text + 5, 0 }, { l.text + 5, 15 } };
	CHECK_EQ(rd(pid, l2, 2, r3, 3), 20);
	CHECK(memcmp(a, "hello ", 6) == 0);
	CHECK(memcmp(b, "from the child", 14) == 0);

	/* From a mapped page into the hole after it: what came before. */
	char e[16] = { 0 };
	struct iovec le = { e, 16 }, rede = { l.edge, 16 };
	CHECK_EQ(rd(pid, &le, 1, &rede, 1), 8);
	CHECK(memcmp(e, "edgebyte", 8) == 0);
	struct iovec rhole = { l.edge + 8, 8 };
	CHECK_ERR(rd(pid, &le, 1, &rhole, 1), EFAULT);

	char msg[] = "written by the parent";
	struct iovec lw = { msg, sizeof msg }, rw = { l.buf, sizeof msg };
	CHECK_EQ(wr(pid, &lw, 1, &rw, 1), (long)sizeof msg);
	struct iovec rro = { l.ro, 4 };
	CHECK_ERR(wr(pid, &lw, 1, &rro, 1), EFAULT);
	char chg[] = "changed in the child";
	struct iovec lc = { chg, sizeof chg }, rc = { l.cow, sizeof chg };
	CHECK_EQ(wr(pid, &lc, 1, &rc, 1), (long)sizeof chg);
	CHECK(strcmp(shared_text, "copy-on-write original") == 0);   /* ours unchanged */

	CHECK_ERR(syscall(SYS_process_vm_readv, pid, &lo, 1, &re, 1, 1), EINVAL);
	CHECK_ERR(rd(pid, &lo, 1025, &re, 1), EINVAL);
	CHECK_EQ(rd(pid, &lo, 0, &re, 1), 0);
	struct iovec bad = { UT_BADPTR, 20 };
	CHECK_ERR(rd(pid, &bad, 1, &re, 1), EFAULT);
	CHECK_ERR(rd(pid, (struct iovec *)UT_BADPTR, 1, &re, 1), EFAULT);

	CHECK_EQ(write(down[1], "g", 1), 1);
	CHECK_EQ(ut_wait(pid), 0);
	CHECK_ERR(rd(pid, &lo, 1, &re, 1), ESRCH);      /* reaped */
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/* Another user may not read a root process. */
static void check_permission(void)
{
	if (getuid() != 0)
		return;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		if (setuid(65534) != 0)
			_exit(2);
		char got[8];
		struct iovec lo = { got, 8 }, re = { shared_text, 8 };
		long r = rd(parent, &lo, 1, &re, 1);
		_exit(r == -1 && errno == EPERM ? 0 : 1);
	}
	CHECK_EQ(ut_wait(pid), 0);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	check_child();
	check_permission();
	return ut_done();
}
