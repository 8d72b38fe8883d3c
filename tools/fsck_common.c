/* What fsck.s5 and fsck.ufs share; see fsck_common.h. */
#include "fsck_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
