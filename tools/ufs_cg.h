/*
 * A cylinder-group block built anew, in mkfs.ufs's layout: shared by
 * mkfs.ufs (a fresh file system) and fsck.ufs (its rebuild of every group
 * from what is reachable), so the two cannot drift apart.  Host tools,
 * single-threaded: no locks.
 */
#ifndef TOOLS_UFS_CG_H
#define TOOLS_UFS_CG_H

#include <stdint.h>

#include "kern/ufs/ufs_fs.h"

/* Sets cg's map offsets for fs; returns the bytes a group block needs. */
int32_t ufs_cg_layout(const struct ufs_super *fs, struct ufs_cg *cg);

/* Group c's block in buf (fs_cgsize bytes), zeroed and given its header
 * and layout; its inode map and counts are the caller's. */
void ufs_cg_start(const struct ufs_super *fs, uint32_t c, uint8_t *buf, int32_t now);

/* Fills group c's free-fragment map, fragment and cluster summaries and
 * free counts from is_free(ctx, fragment number in the file system). */
void ufs_cg_fill_frags(const struct ufs_super *fs, uint32_t c, uint8_t *buf,
                       int (*is_free)(const void *ctx, int64_t frag), const void *ctx);

#endif
