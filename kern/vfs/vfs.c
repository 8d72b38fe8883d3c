/*
 * Placeholder until the VFS lands (being written): boot hooks only.
 */
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>

void vfs_init(void)
{
    cred_init();
}

void vfs_mountroot(const char *dev)
{
    (void)dev;
}
