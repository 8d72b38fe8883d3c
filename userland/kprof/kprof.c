/*
 * kprof: the kernel profiler's table (issue 18).  With the kernel booted
 * kprof=on, every CPU's clock tick notes the kernel function it
 * interrupted (/proc/kprof, kern/arch/kprof.c); this prints the functions
 * most sampled, since boot or while one command runs.
 *
 *   kprof [-n N] [-f FILE]               since boot
 *   kprof [-n N] [-f FILE] command ...   while the command runs
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXFN 2048

struct fn_count {
    char name[64];
    unsigned long long count;
};

struct profile {
    unsigned long long user, kernel, lost;
    int n;
    struct fn_count fn[MAXFN];
};

static const char usage[] =
    "usage: kprof [-n N] [-f FILE] [command [args...]]\n"
    "The kernel functions the clock tick found each CPU in (the kernel booted\n"
    "with kprof=on), most sampled first: since boot, or while command runs.\n"
    "  -n N      print the top N functions (default 20)\n"
    "  -f FILE   read FILE instead of /proc/kprof\n"
    "  -h        this help\n"
    "columns:\n"
    "  samples   clock ticks that found the kernel in the function\n"
    "  kernel%   of all the kernel's samples\n"
    "  all%      of every sample, user mode's included\n"
    "  function  the kernel function (its symbol)\n"
    "The first line gives the samples in user mode, in the kernel, and those\n"
    "lost (a CPU's table was full). Ticks come TICK_HZ (100) times a second\n"
    "per CPU, so a profile wants seconds of work.\n";

static int read_profile(const char *path, struct profile *p)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kprof: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[256];
    memset(p, 0, sizeof *p);
    if (!fgets(line, sizeof line, f) || strncmp(line, "kprof on", 8) != 0) {
        fprintf(stderr, "kprof: the profiler is off (boot the kernel with kprof=on)\n");
        fclose(f);
        return -1;
    }
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "samples user %llu kernel %llu lost %llu", &p->user, &p->kernel,
               &p->lost) != 3) {
        fprintf(stderr, "kprof: %s: no totals line\n", path);
        fclose(f);
        return -1;
    }
    while (p->n < MAXFN && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%llu %63s", &p->fn[p->n].count, p->fn[p->n].name) == 2)
            p->n++;
    }
    fclose(f);
    return 0;
}

static unsigned long long count_of(const struct profile *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->fn[i].name, name) == 0)
            return p->fn[i].count;
    return 0;
}

/* after - before, function by function, kept in after. */
static void subtract(struct profile *after, const struct profile *before)
{
    after->user -= before->user;
    after->kernel -= before->kernel;
    after->lost -= before->lost;
    int kept = 0;
    for (int i = 0; i < after->n; i++) {
        unsigned long long n = after->fn[i].count - count_of(before, after->fn[i].name);
        if (n) {
            after->fn[kept] = after->fn[i];
            after->fn[kept++].count = n;
        }
    }
    after->n = kept;
}

static int by_count(const void *a, const void *b)
{
    unsigned long long x = ((const struct fn_count *)a)->count;
    unsigned long long y = ((const struct fn_count *)b)->count;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void print_profile(struct profile *p, int top)
{
    qsort(p->fn, p->n, sizeof p->fn[0], by_count);
    unsigned long long all = p->user + p->kernel;
    printf("samples: user %llu kernel %llu lost %llu\n", p->user, p->kernel, p->lost);
    printf("%10s %8s %8s  %s\n", "samples", "kernel%", "all%", "function");
    for (int i = 0; i < p->n && i < top; i++)
        printf("%10llu %8.2f %8.2f  %s\n", p->fn[i].count,
               p->kernel ? 100.0 * p->fn[i].count / p->kernel : 0.0,
               all ? 100.0 * p->fn[i].count / all : 0.0, p->fn[i].name);
}

static int run(char **argv)
{
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "kprof: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "kprof: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "kprof: waitpid: %s\n", strerror(errno));
            return -1;
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
    const char *path = "/proc/kprof";
    int top = 20, c;
    while ((c = getopt(argc, argv, "+n:f:h")) != -1) {
        switch (c) {
        case 'n':
            top = atoi(optarg);
            if (top <= 0) {
                fprintf(stderr, "kprof: -n wants a positive count, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'f':
            path = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    static struct profile before, after;
    if (optind == argc) {
        if (read_profile(path, &after))
            return 1;
        print_profile(&after, top);
        return 0;
    }
    if (read_profile(path, &before))
        return 1;
    int status = run(argv + optind);
    if (status < 0 || read_profile(path, &after))
        return 1;
    subtract(&after, &before);
    print_profile(&after, top);
    return status;
}
