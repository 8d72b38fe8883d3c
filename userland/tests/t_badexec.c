/*
 * t_badexec: bad programs.  An executable that is not a valid ELF program
 * for this machine fails execve with ENOEXEC, and the caller goes on with
 * its own image intact; a program that touches unmapped memory dies by
 * SIGSEGV, and its parent sees it: in the wait status, in SIGCHLD's
 * siginfo, and as status 139 in a shell.
 *
 * The invalid ELF files are this program's own header with one field
 * spoiled (each a check Linux's ELF loader also makes before it commits
 * to the new image): another machine, a relocatable object, program
 * headers of the wrong size, none at all, or beyond the end of the file.
 *
 * "t_badexec --as segv" is the program that faults: it unmaps a page it
 * had and writes there.
 */
#include "ut.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int segv_program(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || munmap(p, page) != 0)
		return 3;
	*(volatile char *)p = 1; /* unmapped: SIGSEGV */
	return 4;                /* not reached */
}

/* This program's ELF header and program headers (the first page). */
static unsigned char image[4096];
static long image_len;

static int load_image(void)
{
	int fd = open(ut_self, O_RDONLY);
	if (fd < 0)
		return -1;
	image_len = read(fd, image, sizeof image);
	close(fd);
	return image_len >= (long)sizeof(Elf64_Ehdr) ? 0 : -1;
}

/* Write the header with change() applied as an executable file, and
 * check that execve refuses it with ENOEXEC. */
static void refused(const char *what, void (*change)(Elf64_Ehdr *), long len)
{
	unsigned char copy[sizeof image];
	memcpy(copy, image, image_len);
	change((Elf64_Ehdr *)copy);
	unlink("bad");
	int fd = open("bad", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(write(fd, copy, len), len);
	close(fd);
	char *argv[] = { "bad", NULL };
	errno = 0;
	int r = execve("bad", argv, environ);
	int e = errno;
	ut_check(r == -1 && e == ENOEXEC, __FILE__, __LINE__,
		 "exec of an ELF with %s gives ENOEXEC (got %d, errno %d %s)",
		 what, r, e, strerror(e));
}

static void other_machine(Elf64_Ehdr *h) { h->e_machine = 0x1234; }
static void relocatable(Elf64_Ehdr *h) { h->e_type = ET_REL; }
static void wrong_phentsize(Elf64_Ehdr *h) { h->e_phentsize = 32; }
static void no_phdrs(Elf64_Ehdr *h) { h->e_phnum = 0; }
static void phdrs_past_end(Elf64_Ehdr *h) { h->e_phoff = 1UL << 20; }
static void unchanged(Elf64_Ehdr *h) { (void)h; }

static void test_enoexec(void)
{
	if (load_image() != 0) {
		ut_check(0, __FILE__, __LINE__, "read own ELF header from %s", ut_self);
		return;
	}
	/* The header is what we think it is. */
	Elf64_Ehdr *h = (Elf64_Ehdr *)image;
	CHECK(memcmp(h->e_ident, ELFMAG, SELFMAG) == 0);
	CHECK_EQ(h->e_machine, EM_X86_64);
	CHECK(h->e_phoff + (long)h->e_phnum * h->e_phentsize <= (unsigned long)image_len);

	refused("another machine", other_machine, image_len);
	refused("type ET_REL", relocatable, image_len);
	refused("e_phentsize 32", wrong_phentsize, image_len);
	refused("no program headers", no_phdrs, image_len);
	refused("program headers past the end", phdrs_past_end, image_len);
	/* The header alone, its program headers cut off. */
	refused("truncated program headers", unchanged, sizeof(Elf64_Ehdr));

	/* Still ourselves: memory, descriptors and a fork work. */
	CHECK_EQ(getpid(), getpid());
	CHECK_OK(ut_write_file("after", "ok", 2, 0644));
	pid_t pid = fork();
	if (pid == 0)
		_exit(7);
	int st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}

static volatile sig_atomic_t chld_code, chld_status, chld_pid;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	chld_code = si->si_code;
	chld_status = si->si_status;
	chld_pid = si->si_pid;
}

static pid_t start_segv(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)ut_self, "--as", "segv", NULL };
		execve(ut_self, argv, environ);
		_exit(99);
	}
	return pid;
}

static void test_sigsegv(void)
{
	/* The wait status. */
	pid_t pid = start_segv();
	CHECK(pid > 0);
	int st = ut_wait(pid);
	ut_check(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, __FILE__, __LINE__,
		 "the faulting program died by SIGSEGV (status 0x%x)", st);

	/* SIGCHLD's siginfo: killed (or dumped) by SIGSEGV, this child. */
	struct sigaction sa = { 0 }, old;
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGCHLD, &sa, &old));
	sigset_t chld, prev;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &prev);
	chld_pid = 0;
	pid = start_segv();
	CHECK(pid > 0);
	sigset_t wait_mask = prev;
	sigdelset(&wait_mask, SIGCHLD);
	while (chld_pid == 0)
		sigsuspend(&wait_mask);
	sigprocmask(SIG_SETMASK, &prev, NULL);
	CHECK_EQ(chld_pid, pid);
	CHECK(chld_code == CLD_KILLED || chld_code == CLD_DUMPED);
	CHECK_EQ(chld_status, SIGSEGV);
	st = ut_wait(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	sigaction(SIGCHLD, &old, NULL);

	/* A shell reports 128 + 11. */
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s --as segv; echo $? > shell_status", ut_self);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "sh", "-c", cmd, NULL };
		execve("/bin/sh", argv, environ);
		_exit(99);
	}
	st = ut_wait(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char got[8] = { 0 };
	CHECK(ut_read_file("shell_status", got, sizeof got - 1) > 0);
	CHECK_EQ(atoi(got), 128 + SIGSEGV);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--as") && !strcmp(argv[2], "segv"))
		return segv_program();
	ut_init(argc, argv);
	ut_scratch();
	test_enoexec();
	test_sigsegv();
	return ut_done();
}
