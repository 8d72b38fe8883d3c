/*
 * What fsck.s5 and fsck.ufs share: reporting a problem, allocating or
 * exiting, and the repair mode chosen on the command line (as e2fsck and
 * BSD fsck):
 *
 *   (none), -n   report only, change nothing; exit 1 on any problem
 *   -y           repair everything found; exit 1 when something was
 *                repaired and the image now checks clean, 4 when problems
 *                are left
 *   -p           "preen": repair silently the problems that are safe to
 *                repair without a person (counts, free lists, link counts,
 *                empty unreferenced inodes, the clean flag); on any other
 *                problem report it, change nothing and exit 4
 *
 * Exit 0 means the file system was clean; 2 a usage error or an image
 * that cannot be read (as before these modes existed).
 */
#ifndef TOOLS_FSCK_COMMON_H
#define TOOLS_FSCK_COMMON_H

#include <stddef.h>

enum fsck_mode { FSCK_CHECK, FSCK_YES, FSCK_PREEN };

#define FSCK_EXIT_CLEAN    0
#define FSCK_EXIT_FOUND    1    /* problems found (-n), or repaired (-y, -p) */
#define FSCK_EXIT_USAGE    2
#define FSCK_EXIT_LEFT     4    /* problems left unrepaired */

/* The problems one check found. */
struct fsck_report {
    unsigned problems;          /* all of them */
    unsigned unsafe;            /* those -p may not repair */
    int quiet;                  /* count without printing (preening) */
};

/* Reports one problem, a line on standard output; safe says whether -p
 * may repair it. */
void fsck_problem(struct fsck_report *r, int safe, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* calloc, or a one-line message naming prog and exit 2. */
void *fsck_xcalloc(const char *prog, size_t n, size_t size);

/* Parses -n, -y, -p (one at most) and one IMAGE operand; returns the
 * image, or NULL after printing usage (to stderr) for a bad command line. */
const char *fsck_parse_args(int argc, char **argv, const char *usage,
                            enum fsck_mode *mode);

/*
 * One file system's check and repairs, for fsck_main.  The state is the
 * tool's own (its struct fsck); fsck_main allocates state_size bytes for
 * each check it runs.
 */
struct fsck_tool {
    const char *prog;                   /* "fsck.s5" */
    const char *usage;                  /* the usage line */
    const char *help;                   /* what --help adds below it */
    size_t state_size;
    /* Checks image into a zeroed state; the check's exit status. */
    int (*check)(void *st, const char *image, int quiet);
    struct fsck_report *(*report)(void *st);
    /* True if a clean file system is not marked clean on disk. */
    int (*dirty)(void *st);
    int (*mark_clean)(void *st);        /* 0, or -1 */
    /* Repairs what the check found: the number of repairs, -1 when it
     * cannot, or FSCK_AGAIN to be checked and repaired once more (a
     * superblock was replaced by its copy). */
    int (*repair)(void *st);
};

#define FSCK_AGAIN (-2)

/* The whole program: arguments, the check, the repair and the re-check
 * for -y and -p, the messages and the exit status. */
int fsck_main(const struct fsck_tool *t, int argc, char **argv);

#endif /* TOOLS_FSCK_COMMON_H */
