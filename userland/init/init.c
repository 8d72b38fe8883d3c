/*
 * init: the first user process (pid 1) of Tempest.
 *
 * The kernel mounts the root file system and starts /sbin/init with the
 * console open as file descriptors 0, 1 and 2 (init opens /dev/console
 * itself if they are not).  Then:
 *
 *   - It mounts /proc and /sys (making the directories if the root lacks
 *     them) and
 *     makes /etc/mtab a link to /proc/mounts, as mount, df and e2fsck
 *     expect; and mounts tmpfs on /tmp (mode 1777, Linux's default size:
 *     half of memory), as systemd's tmp.mount does on current Debian, so
 *     /tmp starts empty at each boot and costs the disk nothing.
 *   - If /etc/rc.local exists, init runs it under /bin/sh as root and
 *     waits for it, with one argument: "interactive" when a shell will
 *     follow, "command" when /etc/rc.run will (make run GAEDE=1 mounts
 *     its disks there, tools/userrun.py).  A status other than 0 is
 *     reported ("init: /etc/rc.local: exit status N") and the boot goes on.
 *   - If /etc/rc.run exists (tools/mkroot.py --run writes it for
 *     `make run RUN='...'`) and is not an empty command slot (a kept
 *     image's rc.run whose first line is NO_COMMAND, see
 *     tools/userrun.py), init runs it under /bin/sh as root, prints
 *     "init: exit status N" (or "init: killed by signal N"), and shuts
 *     down.  The host harness reads that line.
 *   - Otherwise it starts an interactive /bin/sh in its own session with
 *     the console as its controlling terminal, so Ctrl-C reaches the
 *     shell's foreground process group, and shuts down when the shell
 *     exits.
 *   - `poweroff`, `reboot` and `halt` typed in any shell (busybox's, in
 *     both userlands) signal init, as on Linux: SIGUSR2 powers off,
 *     SIGTERM reboots, SIGUSR1 halts.  init then shuts down at once.
 *
 * Shutting down is one path for all of these: every other process is
 * sent SIGHUP and SIGTERM, and SIGKILL if it is still there a moment
 * later; init syncs and calls reboot(2), which from pid 1 makes the
 * kernel unmount every file system (the superblocks marked clean) and
 * power off once init is gone (kern/proc/sys_proc.c, kern/main.c).  The
 * emulator is started with -no-reboot and the harness knows only power
 * off, so reboot and halt power off too; init says so.
 *
 * Meanwhile init reaps every orphan that is given to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RC_RUN "/etc/rc.run"
#define RC_LOCAL "/etc/rc.local"
#define NO_COMMAND "# tempest: no command\n"
#define SHELL "/bin/sh"

static char *const shell_env[] = {
    "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin:/add:/tests:/bench", "HOME=/root", "TERM=vt100", "PS1=# ", NULL,
};

static void say(const char *fmt, int n)
{
    char line[80];
    int len = snprintf(line, sizeof line, fmt, n);
    if (len > 0)
        write(2, line, (size_t)len);
}

/* fds 0, 1 and 2 on the console, unless the kernel already opened them. */
static void console_fds(void)
{
    if (fcntl(0, F_GETFD) >= 0 && fcntl(1, F_GETFD) >= 0 && fcntl(2, F_GETFD) >= 0)
        return;
    int fd = open("/dev/console", O_RDWR);
    if (fd < 0)
        return;
    for (int i = 0; i < 3; i++)
        if (fd != i)
            dup2(fd, i);
    if (fd > 2)
        close(fd);
}

/* The signal that asked for a shutdown (SIGUSR2, SIGTERM or SIGUSR1), or
 * 0.  Written by the handler, read by the wait loop with the signals
 * blocked, so a request cannot slip in between the look and the sleep. */
static volatile sig_atomic_t shutdown_signal;

static void on_shutdown(int sig)
{
    shutdown_signal = sig;
}

/* SIGCHLD needs a handler (its default is to be ignored) for sigsuspend
 * to return when a child exits. */
static void on_child(int sig)
{
    (void)sig;
}

/* The mask init runs with: the shutdown signals and SIGCHLD blocked but
 * while it sleeps in sigsuspend.  Children get the mask init started with. */
static sigset_t start_mask;

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_shutdown;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &start_mask);
}

#define SHUTDOWN_ASKED (-2)     /* run's answer when a shutdown signal came */

/* Start argv in a child (a new session on the console when interactive)
 * and wait for it, reaping orphans meanwhile.  Returns its wait status,
 * -1 when it could not be started or waited for, or SHUTDOWN_ASKED. */
static int run(char *const argv[], int interactive)
{
    pid_t pid = fork();
    if (pid < 0) {
        say("init: fork failed, errno %d\n", errno);
        return -1;
    }
    if (pid == 0) {
        signal(SIGUSR2, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGUSR1, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        sigprocmask(SIG_SETMASK, &start_mask, NULL);
        if (interactive) {
            setsid();
            ioctl(0, TIOCSCTTY, 0);
        }
        execve(argv[0], argv, shell_env);
        say("init: cannot run the shell, errno %d\n", errno);
        _exit(127);
    }
    for (;;) {
        if (shutdown_signal)
            return SHUTDOWN_ASKED;
        int status;
        pid_t got = wait4(-1, &status, WNOHANG, NULL);
        if (got == pid)
            return status;
        if (got > 0)
            continue;           /* an orphan, reaped */
        if (got < 0 && errno != EINTR)
            return -1;
        sigsuspend(&start_mask);
    }
}

/* Reap children until there are none, or until limit_ms have passed.
 * Returns 1 when none is left. */
static int reap_all(int limit_ms)
{
    for (int waited = 0;; waited += 10) {
        pid_t got;
        while ((got = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        if (got < 0 && errno == ECHILD)
            return 1;
        if (waited >= limit_ms)
            return 0;
        usleep(10000);
    }
}

/* Every other process goes: SIGHUP and SIGTERM (an interactive shell
 * ignores SIGTERM but not SIGHUP), then SIGKILL for whatever is left a
 * second later.  Orphans come to init, so reaping until there are no
 * children means no process is left. */
static void stop_everyone(void)
{
    if (kill(-1, SIGHUP) < 0 && errno == ESRCH)
        return;                 /* nobody else */
    kill(-1, SIGTERM);
    kill(-1, SIGCONT);          /* a stopped process takes the signals too */
    if (reap_all(1000))
        return;
    kill(-1, SIGKILL);
    reap_all(5000);
}

/* The one way out: stop the other processes, sync, and reboot(2), which
 * from pid 1 makes the kernel unmount every file system and power off. */
static void shut_down(int sig)
{
    const char *what = sig == SIGTERM ? "reboot" : sig == SIGUSR1 ? "halt" : "poweroff";
    int how = sig == SIGTERM ? RB_AUTOBOOT : sig == SIGUSR1 ? RB_HALT_SYSTEM : RB_POWER_OFF;
    if (sig) {
        char line[96];
        int len = snprintf(line, sizeof line, "init: %s%s\n", what,
                           sig == SIGUSR2 ? "" : " (this machine powers off instead)");
        if (len > 0)
            write(2, line, (size_t)len);
    }
    stop_everyone();
    sync();
    reboot(how);
    say("init: power-off failed, errno %d\n", errno);
}

/* /proc, /sys, /etc/mtab as a link to /proc/mounts, and /tmp. */
static void mount_proc(void)
{
    mkdir("/proc", 0555);
    if (mount("proc", "/proc", "proc", 0, NULL) < 0 && errno != EBUSY)
        say("init: cannot mount /proc, errno %d\n", errno);
    mkdir("/sys", 0555);
    if (mount("sysfs", "/sys", "sysfs", 0, NULL) < 0 && errno != EBUSY)
        say("init: cannot mount /sys, errno %d\n", errno);
    struct stat st;
    if (lstat("/etc/mtab", &st) < 0 && symlink("/proc/mounts", "/etc/mtab") < 0)
        say("init: cannot link /etc/mtab to /proc/mounts, errno %d\n", errno);
    mkdir("/tmp", 01777);
    if (mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777") < 0 && errno != EBUSY)
        say("init: cannot mount tmpfs on /tmp, errno %d\n", errno);
}

/* "init: WHAT exit status N" (or "killed by signal N"); the harness
 * reads the command's line, whose WHAT is empty. */
static void report_of(const char *what, int status)
{
    char line[96];
    int len;
    if (status < 0)
        len = snprintf(line, sizeof line, "init: %sexit status %d\n", what, 255);
    else if (WIFSIGNALED(status))
        len = snprintf(line, sizeof line, "init: %skilled by signal %d\n", what,
                       WTERMSIG(status));
    else
        len = snprintf(line, sizeof line, "init: %sexit status %d\n", what, WEXITSTATUS(status));
    if (len > 0)
        write(2, line, (size_t)len);
}

static void report(int status)
{
    report_of("", status);
}

/* Is there a command to run: rc.run exists and is not an empty slot? */
static int has_command(void)
{
    char head[sizeof NO_COMMAND - 1];
    int fd = open(RC_RUN, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return !(n == (ssize_t)sizeof head && memcmp(head, NO_COMMAND, sizeof head) == 0);
}

int main(void)
{
    console_fds();
    umask(022);
    chdir("/");
    catch_signals();
    mount_proc();
    int status = 0;
    int command = has_command();
    if (access(RC_LOCAL, R_OK) == 0) {
        char *argv[] = { SHELL, RC_LOCAL, command ? "command" : "interactive", NULL };
        status = run(argv, 0);
        if (status != SHUTDOWN_ASKED && status != 0)
            report_of(RC_LOCAL ": ", status);
    }
    if (status == SHUTDOWN_ASKED) {
        /* poweroff in rc.local: straight to the shutdown. */
    } else if (command) {
        char *argv[] = { SHELL, RC_RUN, NULL };
        status = run(argv, 0);
    } else {
        char *argv[] = { SHELL, "-i", NULL };
        status = run(argv, 1);
    }
    if (status != SHUTDOWN_ASKED)
        report(status);
    shut_down(status == SHUTDOWN_ASKED ? shutdown_signal : 0);
    for (;;)
        pause();
}
