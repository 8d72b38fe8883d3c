/*
 * Credentials (see kern/vfs/cred.h): immutable once shared, so the only
 * synchronization is the atomic reference count.
 */
#include <kern/vfs/cred.h>
#include <kern/vm/kmem.h>
#include <kern/arch/panic.h>

static struct cred kernel_cred = { .cr_ref = 1 };
struct cred *kcred = &kernel_cred;

void cred_init(void)
{
    /* kernel_cred is all zeros: uid 0, gid 0, no groups. */
}

struct cred *cred_alloc(uint32_t uid, uint32_t gid)
{
    struct cred *cr = kzalloc(sizeof(*cr));
    if (!cr)
        return NULL;
    cr->cr_ref = 1;
    cr->cr_uid = cr->cr_ruid = cr->cr_suid = uid;
    cr->cr_gid = cr->cr_rgid = cr->cr_sgid = gid;
    return cr;
}

struct cred *cred_dup(const struct cred *cr)
{
    struct cred *n = kmalloc(sizeof(*n));
    if (!n)
        return NULL;
    *n = *cr;
    n->cr_ref = 1;
    return n;
}

void cred_hold(struct cred *cr)
{
    __atomic_add_fetch(&cr->cr_ref, 1, __ATOMIC_RELAXED);
}

void cred_rele(struct cred *cr)
{
    if (cr == kcred)
        return;
    if (__atomic_sub_fetch(&cr->cr_ref, 1, __ATOMIC_ACQ_REL) == 0)
        kfree(cr);
}

bool cred_groupmember(const struct cred *cr, uint32_t gid)
{
    if (cr->cr_gid == gid)
        return true;
    for (uint32_t i = 0; i < cr->cr_ngroups && i < NGROUPS_MAX; i++)
        if (cr->cr_groups[i] == gid)
            return true;
    return false;
}
