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
 *     expect.
 *   - If /etc/rc.run exists (tools/mkroot.py --run writes it for
 *     `make run RUN='...'`) and is not an empty command slot (a kept
 *     image's rc.run whose first line is NO_COMMAND, see
 *     tools/userrun.py), init runs it under /bin/sh as root, prints
 *     "init: exit status N" (or "init: killed by signal N"), syncs and
 *     powers the machine off.  The host harness reads that line.
 *   - Otherwise it starts an interactive /bin/sh in its own session with
 *     the console as its controlling terminal, so Ctrl-C reaches the
 *     shell's foreground process group, and powers off when the shell
 *     exits.
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

/* Start argv in a child (a new session on the console when interactive)
 * and wait for it, reaping orphans meanwhile.  Returns its wait status. */
static int run(char *const argv[], int interactive)
{
    pid_t pid = fork();
    if (pid < 0) {
        say("init: fork failed, errno %d\n", errno);
        return -1;
    }
    if (pid == 0) {
        if (interactive) {
            setsid();
            ioctl(0, TIOCSCTTY, 0);
        }
        execve(argv[0], argv, shell_env);
        say("init: cannot run the shell, errno %d\n", errno);
        _exit(127);
    }
    for (;;) {
        int status;
        pid_t got = wait4(-1, &status, 0, NULL);
        if (got == pid)
            return status;
        if (got < 0 && errno != EINTR)
            return -1;
    }
}

/* /proc, /sys, and /etc/mtab as a link to /proc/mounts. */
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
}

static void report(int status)
{
    if (status < 0)
        say("init: exit status %d\n", 255);
    else if (WIFSIGNALED(status))
        say("init: killed by signal %d\n", WTERMSIG(status));
    else
        say("init: exit status %d\n", WEXITSTATUS(status));
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
    mount_proc();
    int status;
    if (has_command()) {
        char *argv[] = { SHELL, RC_RUN, NULL };
        status = run(argv, 0);
        report(status);
    } else {
        char *argv[] = { SHELL, "-i", NULL };
        status = run(argv, 1);
        report(status);
    }
    sync();
    reboot(RB_POWER_OFF);
    say("init: power-off failed, errno %d\n", errno);
    for (;;)
        pause();
}
