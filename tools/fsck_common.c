/* What fsck.s5 and fsck.ufs share; see fsck_common.h. */
#include "fsck_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fsck_problem(struct fsck_report *r, int safe, const char *fmt, ...)
{
    va_list ap;

    r->problems++;
    if (!safe)
        r->unsafe++;
    if (r->quiet)
        return;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

void *fsck_xcalloc(const char *prog, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);

    if (!p) {
        fprintf(stderr, "%s: out of memory\n", prog);
        exit(FSCK_EXIT_USAGE);
    }
    return p;
}

const char *fsck_parse_args(int argc, char **argv, const char *usage,
                            enum fsck_mode *mode)
{
    int c, given = 0;

    *mode = FSCK_CHECK;
    while ((c = getopt(argc, argv, "nyp")) != -1) {
        given++;
        if (c == 'y')
            *mode = FSCK_YES;
        else if (c == 'p')
            *mode = FSCK_PREEN;
        else if (c != 'n')
            given = 99;
    }
    if (given > 1 || argc - optind != 1) {
        fprintf(stderr, "%s\n", usage);
        return NULL;
    }
    return argv[optind];
}

/* A fresh check of image, in a new state. */
static void *check_again(const struct fsck_tool *t, const char *image, int quiet, int *status)
{
    void *st = fsck_xcalloc(t->prog, 1, t->state_size);

    *status = t->check(st, image, quiet);
    return st;
}

/* -y and -p after a check that found problems: repair, check again. */
static int repair(const struct fsck_tool *t, void *st, const char *image, enum fsck_mode mode)
{
    int preen = mode == FSCK_PREEN, status, rounds = 0, fixed;
    struct fsck_report *r = t->report(st);
    unsigned found = r->problems;

    if (preen && r->unsafe) {
        check_again(t, image, 0, &status);      /* show what needs a person */
        printf("%s: %s: UNEXPECTED INCONSISTENCY; run %s -y (%u problem%s "
               "-p may not repair)\n", t->prog, image, t->prog, r->unsafe,
               r->unsafe == 1 ? "" : "s");
        return FSCK_EXIT_LEFT;
    }
    while ((fixed = t->repair(st)) == FSCK_AGAIN && rounds++ < 2) {
        st = check_again(t, image, preen, &status);
        if (status == FSCK_EXIT_CLEAN)
            break;
    }
    if (fixed < 0 && fixed != FSCK_AGAIN)
        return FSCK_EXIT_LEFT;
    if (check_again(t, image, preen, &status), status != FSCK_EXIT_CLEAN) {
        if (preen)
            check_again(t, image, 0, &status);
        printf("%s: %s: problems are left after the repair\n", t->prog, image);
        return FSCK_EXIT_LEFT;
    }
    printf("%s: %s: repaired %u problem%s; it checks clean now\n", t->prog, image, found,
           found == 1 ? "" : "s");
    return FSCK_EXIT_FOUND;
}

int fsck_main(const struct fsck_tool *t, int argc, char **argv)
{
    enum fsck_mode mode;
    const char *image;
    void *st;
    int status;

    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("%s\n%s", t->usage, t->help);
        return 0;
    }
    image = fsck_parse_args(argc, argv, t->usage, &mode);
    if (!image)
        return FSCK_EXIT_USAGE;
    st = check_again(t, image, mode == FSCK_PREEN, &status);
    if (status == FSCK_EXIT_CLEAN && mode != FSCK_CHECK && t->dirty(st)) {
        if (t->mark_clean(st) < 0)
            return FSCK_EXIT_LEFT;
        printf("%s: %s: marked clean\n", t->prog, image);
    }
    if (status != FSCK_EXIT_FOUND || mode == FSCK_CHECK)
        return status;
    return repair(t, st, image, mode);
}
