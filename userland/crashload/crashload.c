/*
 * crashload [-p PROCS] [-s] DIR: the file workload of the crash test
 * (tests/crash_check.py).  It runs until the machine is stopped under it.
 *
 * PROCS workers (default 4) share DIR.  Each creates files (written in
 * chunks of random sizes, under a temporary name, then renamed), removes
 * and renames its older ones, and rewrites a scratch file of its own.  A
 * file is made durable one of three ways: fsync of the file and of DIR
 * after the rename; sync(2) after it (-s, for syncwrites=on runs); or not
 * at all.  Only once a file is durable does the worker say so, in one
 * write to standard output (the console):
 *
 *   crash: durable NAME LENGTH SEED
 *
 * and before it removes or renames a durable file it says
 *
 *   crash: gone NAME
 *
 * so the test knows, whenever the machine stops, which files must be on
 * the disk, byte for byte: byte i of a file with SEED is
 * ((SEED * 2654435761 + i * 40503) mod 2^32) >> 11, low 8 bits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FILES 64    /* files a worker keeps before removing one */
#define MAX_LEN 24000
#define CHUNK 4096

static int dirfd_ = -1;
static int use_sync;

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static uint8_t content(uint32_t seed, uint32_t i)
{
    return (uint8_t)((uint32_t)(seed * 2654435761u + i * 40503u) >> 11);
}

static void say(const char *fmt, const char *name, long len, unsigned long seed)
{
    char line[96];
    int n = snprintf(line, sizeof line, fmt, name, len, seed);
    if (write(1, line, (size_t)n) != n)
        _exit(3);
}

/* Writes len bytes of seed's content to fd in chunks of random sizes. */
static int write_content(int fd, uint32_t seed, uint32_t len)
{
    static uint8_t buf[CHUNK];
    for (uint32_t off = 0; off < len;) {
        uint32_t n = rnd() % CHUNK + 1;
        if (n > len - off)
            n = len - off;
        for (uint32_t i = 0; i < n; i++)
            buf[i] = content(seed, off + i);
        if (write(fd, buf, n) != (ssize_t)n)
            return -1;
        off += n;
    }
    return 0;
}

struct kept {
    char name[32];
    uint32_t len, seed;
    int durable;                /* said so on the console */
};

static struct kept files[MAX_FILES];
static int nfiles;

/* Creates one file; says it is durable when it is. */
static void create_one(int w, long k)
{
    char tmp[32], name[32];
    uint32_t seed = (uint32_t)(w * 1000003 + k), len = rnd() % MAX_LEN;
    if (nfiles == MAX_FILES)
        return;
    int how = rnd() % 3; /* 0 fsync, 1 sync or nothing, 2 nothing */
    snprintf(tmp, sizeof tmp, "t%d_%ld", w, k);
    snprintf(name, sizeof name, "f%d_%ld", w, k);
    int fd = openat(dirfd_, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write_content(fd, seed, len) < 0 || (how == 0 && fsync(fd) < 0)) {
        if (fd >= 0)
            close(fd);
        unlinkat(dirfd_, tmp, 0);
        return;
    }
    close(fd);
    if (renameat(dirfd_, tmp, dirfd_, name) < 0)
        return;
    if (how == 0 && fsync(dirfd_) < 0)
        return;
    if (how == 1 && use_sync)
        sync();
    /* Not durable otherwise: it may or may not be there after a stop. */
    files[nfiles].durable = how == 0 || (how == 1 && use_sync);
    if (files[nfiles].durable)
        say("crash: durable %s %ld %lu\n", name, (long)len, seed);
    strcpy(files[nfiles].name, name);
    files[nfiles].len = len;
    files[nfiles].seed = seed;
    nfiles++;
}

/* Removes file i, or renames it to a new durable name (when it was
   durable and may_rename). */
static void remove_or_rename(int w, long k, int i, int may_rename)
{
    struct kept f = files[i];
    files[i] = files[--nfiles];
    if (f.durable)
        say("crash: gone %s %ld %lu\n", f.name, 0L, 0UL);
    if (!f.durable || !may_rename || rnd() % 2) {
        unlinkat(dirfd_, f.name, 0);
        return;
    }
    snprintf(files[nfiles].name, sizeof files[nfiles].name, "r%d_%ld", w, k);
    if (renameat(dirfd_, f.name, dirfd_, files[nfiles].name) < 0 || fsync(dirfd_) < 0)
        return;
    files[nfiles].len = f.len;
    files[nfiles].seed = f.seed;
    files[nfiles].durable = 1;
    say("crash: durable %s %ld %lu\n", files[nfiles].name, (long)f.len, f.seed);
    nfiles++;
}

/* A scratch file rewritten and truncated: noise for the allocator. */
static void scratch(int w)
{
    char name[32];
    snprintf(name, sizeof name, "s%d", w);
    int fd = openat(dirfd_, name, O_RDWR | O_CREAT, 0644);
    if (fd < 0)
        return;
    (void)!write_content(fd, rnd(), rnd() % MAX_LEN);
    (void)!ftruncate(fd, rnd() % MAX_LEN);
    if (rnd() % 4 == 0)
        fsync(fd);
    close(fd);
}

static void worker(int w)
{
    rng_state = 0x9e3779b97f4a7c15ULL * (uint64_t)(w + 1);
    for (long k = 0;; k++) {
        uint32_t op = rnd() % 10;
        if (nfiles == MAX_FILES)
            remove_or_rename(w, k, (int)(rnd() % nfiles), 0);
        if (op < 6 || nfiles == 0)
            create_one(w, k);
        else if (op < 9)
            remove_or_rename(w, k, (int)(rnd() % nfiles), 1);
        else
            scratch(w);
    }
}

int main(int argc, char **argv)
{
    int procs = 4, c;
    while ((c = getopt(argc, argv, "p:s")) != -1) {
        if (c == 'p')
            procs = atoi(optarg);
        else if (c == 's')
            use_sync = 1;
        else {
            fprintf(stderr, "usage: crashload [-p PROCS] [-s] DIR\n");
            return 2;
        }
    }
    if (argc - optind != 1 || procs < 1 || procs > 64) {
        fprintf(stderr, "usage: crashload [-p PROCS] [-s] DIR\n");
        return 2;
    }
    const char *dir = argv[optind];
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "crashload: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    dirfd_ = open(dir, O_RDONLY | O_DIRECTORY);
    if (dirfd_ < 0) {
        fprintf(stderr, "crashload: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (fsync(dirfd_) == 0 && use_sync)
        sync();
    printf("crash: started %d workers in %s\n", procs, dir);
    fflush(stdout);
    for (int w = 0; w < procs; w++)
        if (fork() == 0) {
            worker(w);
            _exit(0);
        }
    while (wait(NULL) > 0)
        ;
    return 0;
}
