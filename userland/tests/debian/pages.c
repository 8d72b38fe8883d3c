/* numactl's judge inside Tempest (native.sh): 64 pages of an anonymous
 * mapping touched, then the nodes /proc/self/numa_maps says they are on
 * ("N0=32 N1=32").  With an argument it says "ready", waits for SIGUSR1
 * (a migratepages meanwhile) and tells again. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 64

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
    (void)sig;
    go = 1;
}

/* The N<node>=<pages> words of the mapping at p. */
static void report(const void *p)
{
    char want[32], line[1024];
    snprintf(want, sizeof want, "%08lx ", (unsigned long)p);
    FILE *f = fopen("/proc/self/numa_maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, want, strlen(want)) != 0)
            continue;
        const char *sep = "";
        for (char *w = strtok(line, " \n"); w; w = strtok(NULL, " \n"))
            if (w[0] == 'N' && strchr(w, '=')) {
                printf("%s%s", sep, w);
                sep = " ";
            }
        printf("\n");
    }
    if (f)
        fclose(f);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    /* Executable too, so that no neighbour mapping merges with it. */
    char *p = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 1;
    memset(p, 1, PAGES * 4096);
    report(p);
    if (argc > 1) {
        signal(SIGUSR1, on_usr1);
        printf("ready\n");
        fflush(stdout);
        while (!go)
            pause();
        report(p);
    }
    return 0;
}
