/*
 * ktprog: the user program the kernel's user-mode ktests run
 * (kern/tests/test_user.c).  Built static against musl and embedded in the
 * kernel (kern/tests/ktprogs.asm); the test writes it to the root file
 * system and runs "ktprog MODE".  Each mode checks one area and exits 0 on
 * success; a failed check prints its line and exits with status 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { printf("ktprog: check failed: %s (line %d, errno %d)\n", \
                                        #c, __LINE__, errno); exit(1); } } while (0)

static const char *self;

/* Run fn in a child; return the child's wait status. */
static int in_child(void (*fn)(void))
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return st;
}

static int mode_hello(int argc, char **argv)
{
    printf("ktprog: hello from user mode, pid %d, argc %d\n", getpid(), argc);
    CHECK(getauxval(AT_PAGESZ) == 4096);
    CHECK(getauxval(AT_RANDOM) != 0);
    CHECK(getauxval(AT_PHNUM) > 0);
    CHECK(getenv("KTPROG") && !strcmp(getenv("KTPROG"), "yes"));
    struct utsname u;
    CHECK(uname(&u) == 0 && !strcmp(u.sysname, "Tempest"));
    return argc > 2 ? atoi(argv[argc - 1]) : 0;     /* the last argument */
}

static volatile int cow_global = 1;

static void cow_child(void)
{
    cow_global = 2;
    char *heap = getenv("COWBUF");
    (void)heap;
    _exit(cow_global == 2 ? 10 : 1);
}

static int mode_fork(void)
{
    char *buf = malloc(100000);
    CHECK(buf);
    memset(buf, 'p', 100000);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        memset(buf, 'c', 100000);
        cow_global = 2;
        _exit(buf[99999] == 'c' && cow_global == 2 ? 10 : 1);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 10);
    CHECK(cow_global == 1);
    for (int i = 0; i < 100000; i += 4096)
        CHECK(buf[i] == 'p');
    CHECK(in_child(cow_child) == (10 << 8));
    CHECK(cow_global == 1);
    CHECK(wait(&st) == -1 && errno == ECHILD);
    /* Many children at once, reaped in any order. */
    for (int i = 0; i < 5; i++) {
        pid_t c = fork();
        CHECK(c >= 0);
        if (c == 0)
            _exit(20 + i);
    }
    int seen = 0;
    for (int i = 0; i < 5; i++) {
        CHECK(wait(&st) > 0 && WIFEXITED(st));
        seen |= 1 << (WEXITSTATUS(st) - 20);
    }
    CHECK(seen == 31);
    CHECK(getppid() == 0 || getppid() > 0);
    return 0;
}

static void null_write(void) { *(volatile int *)0 = 1; }
static void kernel_write(void) { *(volatile int *)0xffffffff80100000UL = 1; }

static int mode_segv(void)
{
    int st = in_child(null_write);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    st = in_child(kernel_write);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    return 0;
}

/* Signals: a handler runs for raise() before it returns, with the signal
 * blocked inside, and registers survive the handler; a caught SIGSEGV
 * fixes the mapping with mprotect and the faulting write is retried. */
static volatile sig_atomic_t sig_hits, sig_blocked;
static volatile char *sig_page;

static void on_usr1(int sig)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    sig_blocked = sigismember(&cur, sig);
    sig_hits++;
}

static void on_segv_fix(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    /* si_addr is the faulting byte (sig_page + 5), as on Linux. */
    if ((char *)si->si_addr == (char *)sig_page + 5 &&
        mprotect((void *)sig_page, 4096, PROT_READ | PROT_WRITE) == 0)
        sig_hits++;
    else
        _exit(7);
}

static int mode_signal(void)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(raise(SIGUSR1) == 0);
    CHECK(sig_hits == 1 && sig_blocked == 1);
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    CHECK(!sigismember(&cur, SIGUSR1));
    sig_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(sig_page != MAP_FAILED);
    sa.sa_sigaction = on_segv_fix;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
    sig_page[5] = 42;
    CHECK(sig_hits == 2 && sig_page[5] == 42);
    return 0;
}

static int mode_efault(void)
{
    char buf[16];
    void *kp = (void *)0xffffffff80100000UL;
    CHECK(write(1, kp, 10) == -1 && errno == EFAULT);
    int zero = open("/dev/zero", O_RDONLY);     /* not the console: it waits for input */
    CHECK(zero >= 0 && read(zero, kp, 10) == -1 && errno == EFAULT);
    if (zero >= 0)
        close(zero);
    CHECK(open((char *)kp, O_RDONLY) == -1 && errno == EFAULT);
    CHECK(open((char *)0x1000, O_RDONLY) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_stat, "/", kp) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_uname, (void *)0x7ffffffff000UL) == -EFAULT || errno == EFAULT);
    CHECK(syscall(SYS_getcwd, kp, 100) == -1 && errno == EFAULT);
    CHECK(syscall(400) == -1 && errno == ENOSYS);
    static uint64_t counts[512];
    CHECK(syscall(1003, counts, 512) == 512 && counts[400] >= 1);   /* TEMPEST_SYS_ENOSYS_COUNTS */
    CHECK(syscall(1003, kp, 512) == -1 && errno == EFAULT);
    (void)buf;
    return 0;
}

static int mode_files(void)
{
    char buf[256];
    mkdir("/ktp", 0755);
    CHECK(chdir("/ktp") == 0);
    CHECK(getcwd(buf, sizeof buf) && !strcmp(buf, "/ktp"));
    CHECK(mkdir("d", 0755) == 0);
    CHECK(mkdir("d", 0755) == -1 && errno == EEXIST);
    int fd = open("d/f", O_CREAT | O_RDWR | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, "hello world\n", 12) == 12);
    CHECK(lseek(fd, 6, SEEK_SET) == 6);
    CHECK(read(fd, buf, 100) == 6 && !memcmp(buf, "world\n", 6));
    CHECK(pread(fd, buf, 5, 0) == 5 && !memcmp(buf, "hello", 5));
    CHECK(lseek(fd, 0, SEEK_END) == 12);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 12 && S_ISREG(st.st_mode));
    int fd2 = dup(fd);
    CHECK(fd2 > fd);
    CHECK(dup2(fd, 20) == 20);
    CHECK(fcntl(20, F_GETFD) == 0);
    CHECK(fcntl(20, F_SETFD, FD_CLOEXEC) == 0 && fcntl(20, F_GETFD) == FD_CLOEXEC);
    CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
    CHECK(fcntl(fd, F_DUPFD, 30) == 30);
    CHECK(close(20) == 0 && close(30) == 0 && close(fd2) == 0);
    CHECK(close(20) == -1 && errno == EBADF);
    CHECK(close(fd) == 0);
    CHECK(stat("d/f", &st) == 0 && st.st_size == 12);
    CHECK(link("d/f", "d/g") == 0);
    CHECK(stat("d/g", &st) == 0 && st.st_nlink == 2);
    CHECK(rename("d/g", "h") == 0);
    CHECK(access("h", R_OK) == 0 && access("d/g", F_OK) == -1 && errno == ENOENT);
    CHECK(symlink("d/f", "s") == 0);
    CHECK(readlink("s", buf, sizeof buf) == 3 && !memcmp(buf, "d/f", 3));
    CHECK(lstat("s", &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(stat("s", &st) == 0 && S_ISREG(st.st_mode));
    DIR *dir = opendir(".");
    CHECK(dir);
    int found = 0;
    struct dirent *de;
    while ((de = readdir(dir)))
        found += !strcmp(de->d_name, "d") + !strcmp(de->d_name, "h") + !strcmp(de->d_name, "s");
    closedir(dir);
    CHECK(found == 3);
    CHECK(chdir("d") == 0 && getcwd(buf, sizeof buf) && !strcmp(buf, "/ktp/d"));
    CHECK(chdir("..") == 0);
    CHECK(unlink("s") == 0 && unlink("h") == 0 && unlink("d/f") == 0);
    CHECK(rmdir("d") == 0);
    CHECK(rmdir("nonexistent") == -1 && errno == ENOENT);
    CHECK(chdir("/") == 0 && rmdir("/ktp") == 0);
    CHECK(umask(077) == 022 && umask(022) == 077);
    CHECK(isatty(1));
    return 0;
}

static volatile char *mm_page;
static void touch_page(void) { mm_page[0] = 1; }
static void read_page(void) { (void)*(volatile char *)mm_page; }

static int mode_mmap(void)
{
    char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK(p[0] == 0 && p[8191] == 0);
    p[100] = 7;
    CHECK(munmap(p + 4096, 4096) == 0);
    mm_page = p + 4096;
    int st = in_child(read_page);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    CHECK(p[100] == 7);
    CHECK(mprotect(p, 4096, PROT_READ) == 0);
    mm_page = p;
    st = in_child(touch_page);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    CHECK(mprotect(p, 4096, PROT_READ | PROT_WRITE) == 0);
    p[1] = 3;
    CHECK(munmap(p, 4096) == 0);
    /* shared anonymous memory is shared across fork */
    volatile int *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    pid_t pid = fork();
    if (pid == 0) {
        sh[0] = 1234;
        _exit(0);
    }
    CHECK(waitpid(pid, &st, 0) == pid && st == 0);
    CHECK(sh[0] == 1234);
    /* a private file mapping of this program starts with the ELF magic */
    int fd = open(self, O_RDONLY);
    CHECK(fd >= 0);
    char *f = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(f != MAP_FAILED && !memcmp(f, "\177ELF", 4));
    close(fd);
    /* brk and a big malloc */
    char *b0 = sbrk(0);                     /* musl's sbrk only reads the break */
    CHECK(syscall(SYS_brk, b0 + 100000) == (long)(b0 + 100000));
    memset(b0, 5, 100000);
    CHECK(syscall(SYS_brk, b0 + 4096) == (long)(b0 + 4096));
    CHECK(b0[4095] == 5);
    char *big = malloc(4 << 20);
    CHECK(big);
    memset(big, 9, 4 << 20);
    CHECK(big[(4 << 20) - 1] == 9);
    free(big);
    return 0;
}

static int mode_nproc(void)
{
    volatile int *go = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(go != MAP_FAILED);
    int n = 0, err = 0;
    for (int i = 0; i < 50; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            while (!*go)
                sched_yield();
            _exit(0);
        }
        if (pid < 0) {
            err = errno;
            break;
        }
        n++;
    }
    *go = 1;
    while (wait(NULL) > 0)
        ;
    printf("ktprog: %d forks, then errno %d\n", n, err);
    CHECK(err == EAGAIN);
    return n;
}

static int mode_exec(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = { (char *)self, "hello", "33", NULL };
        char *envp[] = { "KTPROG=yes", NULL };
        execve(self, argv, envp);
        _exit(99);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 33);
    /* not an executable */
    int fd = open("/ktp_bad", O_CREAT | O_WRONLY | O_TRUNC, 0755);
    CHECK(fd >= 0 && write(fd, "garbage garbage garbage garbage garbage garbage garbage garbage\n", 64) == 64);
    close(fd);
    char *argv[] = { "/ktp_bad", NULL };
    CHECK(execve("/ktp_bad", argv, argv + 1) == -1 && errno == ENOEXEC);
    /* a script whose interpreter is this program */
    fd = open("/ktp_script", O_CREAT | O_WRONLY | O_TRUNC, 0755);
    char line[200];
    int n = snprintf(line, sizeof line, "#!%s hello\n", self);
    CHECK(fd >= 0 && write(fd, line, n) == n);
    close(fd);
    pid = fork();
    if (pid == 0) {
        char *sargv[] = { "/ktp_script", "44", NULL };
        char *envp[] = { "KTPROG=yes", NULL };
        execve("/ktp_script", sargv, envp);
        printf("ktprog: script exec failed, errno %d\n", errno);
        _exit(98);
    }
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 44);
    CHECK(unlink("/ktp_bad") == 0 && unlink("/ktp_script") == 0);
    return 0;
}

/* SSE registers survive context switches: more processes than CPUs each
 * keep their own value in xmm5 across sched_yield system calls. */
static int mode_fpu(void)
{
    int nchild = 8;
    for (int c = 0; c < nchild; c++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid)
            continue;
        uint64_t in = 0x1111111111111111ULL * (c + 1);
        for (int i = 0; i < 300; i++) {
            uint64_t out;
            long nr = SYS_sched_yield;
            __asm__ volatile("movq %2, %%xmm5\n\tsyscall\n\tmovq %%xmm5, %0"
                             : "=r"(out), "+a"(nr) : "r"(in) : "rcx", "r11", "xmm5", "memory");
            if (out != in)
                _exit(1);
        }
        _exit(0);
    }
    int st, bad = 0;
    for (int c = 0; c < nchild; c++) {
        CHECK(wait(&st) > 0);
        bad += st != 0;
    }
    CHECK(bad == 0);
    return 0;
}

/* Touch more memory than the machine has: the kernel must kill us. */
static int mode_oom(void)
{
    size_t len = 16UL << 30;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    CHECK(p != MAP_FAILED);
    close(open("/ktoom_ready", O_CREAT | O_WRONLY, 0644));
    for (size_t i = 0; i < len; i += 4096)
        p[i] = 1;
    return 0;
}

/* Orphans: a child exits leaving a zombie child of its own and a living
 * one.  Run from a ktest there is no init to adopt them, and the kernel
 * must free them all the same (the ktest counts their locks). */
static int mode_orphans(void)
{
    int hold[2];
    CHECK(pipe(hold) == 0);
    pid_t mid = fork();
    CHECK(mid >= 0);
    if (mid == 0) {
        pid_t zombie = fork();
        if (zombie == 0)
            _exit(0);
        pid_t alive = fork();
        if (alive == 0) {
            char c;
            close(hold[1]);
            read(hold[0], &c, 1);       /* until the top closes it */
            _exit(0);
        }
        siginfo_t si;
        /* Wait until it is a zombie, and leave it one. */
        _exit(zombie > 0 && alive > 0 && waitid(P_PID, zombie, &si, WEXITED | WNOWAIT) == 0 ? 0 : 1);
    }
    close(hold[0]);
    int st;
    CHECK(waitpid(mid, &st, 0) == mid && st == 0);
    close(hold[1]);                     /* the living orphan exits now */
    return 0;
}

static int mode_spin(void)
{
    for (volatile uint64_t i = 0;; i++)
        ;
    return 0;
}

/* Run as pid 1 (init=/path/to/ktprog): the console on 0, 1 and 2. */
static int mode_init(void)
{
    printf("ktprog: running as init, pid %d\n", getpid());
    for (int fd = 0; fd < 3; fd++)
        CHECK(isatty(fd));
    pid_t pid = fork();
    if (pid == 0)
        _exit(3);
    int st;
    CHECK(wait(&st) == pid && WEXITSTATUS(st) == 3);
    return 5;
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc == 1 && getpid() == 1)
        return mode_init();
    const char *mode = argc > 1 ? argv[1] : "hello";
    if (!strcmp(mode, "hello"))
        return mode_hello(argc, argv);
    if (!strcmp(mode, "fork"))
        return mode_fork();
    if (!strcmp(mode, "segv"))
        return mode_segv();
    if (!strcmp(mode, "efault"))
        return mode_efault();
    if (!strcmp(mode, "signal"))
        return mode_signal();
    if (!strcmp(mode, "files"))
        return mode_files();
    if (!strcmp(mode, "mmap"))
        return mode_mmap();
    if (!strcmp(mode, "nproc"))
        return mode_nproc();
    if (!strcmp(mode, "exec"))
        return mode_exec();
    if (!strcmp(mode, "fpu"))
        return mode_fpu();
    if (!strcmp(mode, "oom"))
        return mode_oom();
    if (!strcmp(mode, "spin"))
        return mode_spin();
    if (!strcmp(mode, "orphans"))
        return mode_orphans();
    printf("ktprog: unknown mode %s\n", mode);
    return 2;
}
