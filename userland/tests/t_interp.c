/*
 * t_interp: programs with a PT_INTERP.  The kernel maps the interpreter
 * the program names, starts it, and tells it about the program through
 * the auxiliary vector.
 *
 * The programs are made here: an ELF header, a PT_INTERP and one PT_LOAD
 * mapping the file's first page, either at a fixed address (ET_EXEC) or
 * wherever the kernel puts a PIE (ET_DYN).  Their interpreter is this very
 * program (static, ET_EXEC at its own addresses): started as
 * "t_interp --as interp ...", it checks what it was given and exits with a
 * bit for each thing that was wrong:
 *
 *   AT_PHDR  points at the program's headers, in memory, the page before
 *            them starting with the ELF magic; AT_PHNUM 2, AT_PHENT 56
 *   AT_ENTRY the program's e_entry (plus the PIE's bias, the same as
 *            AT_PHDR's)
 *   AT_EXECFN the path given to execve; AT_PLATFORM "x86_64"; AT_PAGESZ
 *            4096; AT_RANDOM 16 readable bytes; AT_HWCAP CPUID 1's EDX
 *
 * A bad interpreter fails execve before the caller's image is gone, with
 * Linux's errors: a missing one ENOENT, a directory or a file without
 * execute permission EACCES, one shorter than an ELF header EIO, one that
 * is not an x86-64 ELF program ELIBBAD; a PT_INTERP path without its NUL
 * is ENOEXEC.
 */
#include "ut.h"

#include <cpuid.h>
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PAGE 4096
#define FIXED_BASE 0x10000000UL
#define ENTRY_OFF 0x200

enum {
	BAD_PHDR = 1, BAD_PHNUM = 2, BAD_ENTRY = 4, BAD_EXECFN = 8,
	BAD_PLATFORM = 16, BAD_RANDOM = 32, BAD_HWCAP = 64,
};

/* ---- the interpreter's side ---- */

static int check_phdrs(unsigned long phdr)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)phdr;
	const unsigned char *eh = (const unsigned char *)(phdr - sizeof(Elf64_Ehdr));
	return ph && ph[0].p_type == PT_INTERP && ph[1].p_type == PT_LOAD &&
	       memcmp(eh, ELFMAG, SELFMAG) == 0 ? 0 : BAD_PHDR;
}

static int as_interp(char **argv)
{
	const char *want_execfn = argv[3];
	int bad = 0;
	unsigned long phdr = getauxval(AT_PHDR), entry = getauxval(AT_ENTRY);
	bad |= check_phdrs(phdr);
	if (getauxval(AT_PHNUM) != 2 || getauxval(AT_PHENT) != sizeof(Elf64_Phdr))
		bad |= BAD_PHNUM;
	/* The program's first page holds the header, then the phdrs. */
	if (entry - (phdr - sizeof(Elf64_Ehdr)) != ENTRY_OFF)
		bad |= BAD_ENTRY;
	if (!strcmp(argv[2], "exec") && entry != FIXED_BASE + ENTRY_OFF)
		bad |= BAD_ENTRY;
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	if (!execfn || strcmp(execfn, want_execfn))
		bad |= BAD_EXECFN;
	const char *plat = (const char *)getauxval(AT_PLATFORM);
	if (!plat || strcmp(plat, "x86_64") || getauxval(AT_PAGESZ) != PAGE)
		bad |= BAD_PLATFORM;
	const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
	unsigned sum = 0;
	for (int i = 0; rnd && i < 16; i++)
		sum |= rnd[i];
	if (!rnd || !sum)
		bad |= BAD_RANDOM;
	unsigned a, b, c, d;
	__cpuid(1, a, b, c, d);
	if (getauxval(AT_HWCAP) != d)
		bad |= BAD_HWCAP;
	return bad;
}

/* ---- making programs ---- */

/* A one-page program: type ET_EXEC or ET_DYN, PT_INTERP interp (ilen
 * bytes of it, NUL included when ilen says so). */
static int make_program(const char *path, int type, const char *interp, size_t ilen)
{
	unsigned char img[PAGE];
	memset(img, 0, sizeof img);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof *eh);
	unsigned long base = type == ET_EXEC ? FIXED_BASE : 0;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = type;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = base + ENTRY_OFF;
	eh->e_phoff = sizeof *eh;
	eh->e_ehsize = sizeof *eh;
	eh->e_phentsize = sizeof *ph;
	eh->e_phnum = 2;
	size_t ioff = sizeof *eh + 2 * sizeof *ph;
	memcpy(img + ioff, interp, ilen);
	ph[0] = (Elf64_Phdr){ .p_type = PT_INTERP, .p_flags = PF_R, .p_offset = ioff,
			      .p_vaddr = base + ioff, .p_filesz = ilen, .p_memsz = ilen, .p_align = 1 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			      .p_vaddr = base, .p_filesz = PAGE, .p_memsz = PAGE, .p_align = PAGE };
	return ut_write_file(path, img, sizeof img, 0755);
}

static int run(const char *path, const char *mode)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)path, "--as", (char *)mode, (char *)path, NULL };
		execve(path, argv, environ);
		_exit(100 + errno % 100);
	}
	int st = ut_wait(pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 200 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void check_started(const char *what, int type, const char *mode)
{
	unlink("prog");
	CHECK_OK(make_program("prog", type, ut_self, strlen(ut_self) + 1));
	int bad = run("./prog", mode);
	ut_check(bad == 0, __FILE__, __LINE__,
		 "%s started its interpreter with a right auxiliary vector (status %d:%s%s%s%s%s%s%s)",
		 what, bad, bad & BAD_PHDR ? " AT_PHDR" : "", bad & BAD_PHNUM ? " AT_PHNUM/PHENT" : "",
		 bad & BAD_ENTRY ? " AT_ENTRY" : "", bad & BAD_EXECFN ? " AT_EXECFN" : "",
		 bad & BAD_PLATFORM ? " AT_PLATFORM/PAGESZ" : "", bad & BAD_RANDOM ? " AT_RANDOM" : "",
		 bad & BAD_HWCAP ? " AT_HWCAP" : "");
}

/* ---- bad interpreters ---- */

static void refused(const char *what, const char *interp, size_t ilen, int want)
{
	unlink("bad");
	CHECK_OK(make_program("bad", ET_EXEC, interp, ilen));
	char *argv[] = { "bad", NULL };
	errno = 0;
	int r = execve("./bad", argv, environ);
	int e = errno;
	ut_check(r == -1 && e == want, __FILE__, __LINE__,
		 "exec with %s fails with errno %d (got %d, errno %d %s)", what, want, r, e,
		 strerror(e));
}

static void spoil_machine(const char *to)
{
	unsigned char hdr[PAGE];
	int fd = open(ut_self, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, hdr, sizeof hdr) : -1;
	if (fd >= 0)
		close(fd);
	CHECK_EQ(n, (ssize_t)sizeof hdr);
	((Elf64_Ehdr *)hdr)->e_machine = 0x1234;
	CHECK_OK(ut_write_file(to, hdr, sizeof hdr, 0755));
}

static void check_bad_interpreters(void)
{
	char cwd[512], path[700];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	snprintf(path, sizeof path, "%s/no-such-interp", cwd);
	refused("a missing interpreter", path, strlen(path) + 1, ENOENT);

	snprintf(path, sizeof path, "%s/idir", cwd);
	CHECK_OK(mkdir(path, 0755));
	refused("a directory as interpreter", path, strlen(path) + 1, EACCES);

	snprintf(path, sizeof path, "%s/itext", cwd);
	static const char text[] = "this is not an ELF file, only some text long enough "
				   "to hold an ELF header and then some more of it.\n";
	CHECK_OK(ut_write_file(path, text, sizeof text - 1, 0755));
	refused("a text file as interpreter", path, strlen(path) + 1, ELIBBAD);

	snprintf(path, sizeof path, "%s/ishort", cwd);
	CHECK_OK(ut_write_file(path, "\177ELF\2\1\1", 7, 0755));
	refused("an interpreter shorter than an ELF header", path, strlen(path) + 1, EIO);

	snprintf(path, sizeof path, "%s/imach", cwd);
	spoil_machine(path);
	refused("an interpreter for another machine", path, strlen(path) + 1, ELIBBAD);

	snprintf(path, sizeof path, "%s/inoexec", cwd);
	CHECK_OK(ut_write_file(path, text, sizeof text - 1, 0644));
	refused("an interpreter without execute permission", path, strlen(path) + 1, EACCES);

	refused("a PT_INTERP without its NUL", ut_self, strlen(ut_self), ENOEXEC);
	/* The caller's image is still whole. */
	CHECK_OK(ut_write_file("after", "ok", 2, 0644));
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--as"))
		return as_interp(argv);
	ut_init(argc, argv);
	check_started("an ET_EXEC program", ET_EXEC, "exec");
	check_started("a PIE (ET_DYN)", ET_DYN, "pie");
	check_bad_interpreters();
	return ut_done();
}
