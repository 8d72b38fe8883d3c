/* In-kernel benchmarks (kbench=NAME,...): the table in kern/tests/kbench.c. */
#ifndef KERN_TESTS_KBENCH_H
#define KERN_TESTS_KBENCH_H

/* Run the benchmarks the comma list names ("all" for every one); unknown
 * names are reported as "kbench: unknown benchmark 'X'". */
void kbench_run(const char *list);

#endif
