/*
 * Boot-time file-system actions: kbench=fs (kern/vfs/fsbench.c) and
 * fsprobe=DISK,... (kern/vfs/fsprobe.c), run from kmain's finish().
 */
#ifndef KERN_VFS_FSBENCH_H
#define KERN_VFS_FSBENCH_H

void fsbench_run(void);
void fsprobe_run(const char *list);

#endif
