/*
 * Credentials: who is asking.  A struct cred is immutable once it is
 * shared (a process that changes its uid gets a new one, as in SVR4), so
 * readers need no lock; only the reference count changes, atomically.
 * The DNLC hashes the cred pointer (seed 001: the same name looked up by
 * many users must spread over rows), so the pointer is its identity.
 * Implementation: kern/vfs/cred.c.
 */
#ifndef KERN_VFS_CRED_H
#define KERN_VFS_CRED_H

#include <kern/lib/types.h>

/* Supplementary groups a credential holds; Linux allows 65536, and
 * setgroups with more than NGROUPS_MAX but at most that gets ENOMEM. */
#define NGROUPS_MAX 32
#define NGROUPS_LINUX 65536

struct cred {
    uint32_t cr_ref;                /* [a] references */
    uint32_t cr_uid, cr_gid;        /* [c] effective ids */
    uint32_t cr_ruid, cr_rgid;      /* [c] real ids */
    uint32_t cr_suid, cr_sgid;      /* [c] saved ids (setresuid, set-id exec) */
    uint32_t cr_ngroups;            /* [c] supplementary groups in use */
    uint32_t cr_groups[NGROUPS_MAX];/* [c] */
};

/* The superuser credential used by kernel threads and ktests; never freed. */
extern struct cred *kcred;

void cred_init(void);
/* A new credential (one reference) for uid/gid (real, effective and
 * saved) with no supplementary groups; NULL when memory is short. */
struct cred *cred_alloc(uint32_t uid, uint32_t gid);
void cred_hold(struct cred *cr);
void cred_rele(struct cred *cr);
/* Is cr a member of group gid (effective or supplementary)? */
bool cred_groupmember(const struct cred *cr, uint32_t gid);
/* A new credential (one reference) that copies cr; NULL when memory is
 * short.  The caller changes it before anyone else can see it. */
struct cred *cred_dup(const struct cred *cr);

#endif
