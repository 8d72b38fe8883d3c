/*
 * What /proc and sysinfo read about processes they do not run in: a
 * hold on a process, its pids, its program and arguments, its current
 * directory and descriptors.
 *
 * Theory.  A /proc file is made in the reader's system call while the
 * process it describes goes on living, execs or exits on another CPU.
 * proc_hold counts the reader in p_holds (under proc_lock); while it is
 * held, the process's memory is not freed (proc_free waits for the count
 * to drop) and neither is any address space the reader found in its p_as
 * (exec and exit let the old one go in release_as, which waits as well).
 * So a reader may sleep, on the address space's lock to list its
 * mappings for instance, without the process vanishing underneath.  The
 * waits are short: a reader holds a process only while it makes one file.
 *
 * The program's path and arguments (struct proc_image) are copied at
 * exec, since the arguments in the process's own memory can be changed or
 * unmapped by it, and shared by fork's children (an atomic count) until
 * they exec in turn.  p_image is changed and read under proc_lock.  The
 * current directory is read under the descriptor table's lock, which
 * chdir and exit take to change it.  The credentials (p_cred) are read
 * without a lock: setuid may replace them meanwhile, and the reader may
 * see the old ones (heap memory stays mapped, so a stale value is all it
 * can get; the readers copy the fields and bound the group count).
 *
 * Locks: proc_lock (row 2), then p_fdlock; the address space's lock (row
 * 1) is taken by the reader (kern/procfs) with no process lock held.
 */
#include <kern/proc/proc.h>
#include <kern/proc/proc_impl.h>
#include <kern/lock/sleep.h>
#include <kern/vfs/vfs.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>

struct proc *proc_hold(int pid)
{
    mutex_enter(&proc_lock);
    /* A child just forked may run before fork has stored its thread
     * (p_thread): it is held all the same, and the files allow for that. */
    struct proc *p = find_proc_locked(pid);
    if (p)
        p->p_holds++;
    mutex_exit(&proc_lock);
    return p;
}

void proc_rele(struct proc *p)
{
    mutex_enter(&proc_lock);
    if (--p->p_holds == 0)
        wakeup(&p->p_holds);
    mutex_exit(&proc_lock);
}

int proc_tids(struct proc *p, int *out, int max)
{
    int n = 0;
    mutex_enter(&proc_lock);
    for (struct lwp *l = p->p_state == PS_ZOMBIE ? NULL : p->p_lwps; l && n < max;
         l = l->l_next) {
        int i = n++;
        while (i > 0 && out[i - 1] > l->l_tid) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = l->l_tid;
    }
    mutex_exit(&proc_lock);
    return n;
}

int proc_pids(int *out, int max)
{
    int n = 0;
    mutex_enter(&proc_lock);
    for (struct proc *p = allproc; p; p = p->p_next) {
        if (!p->p_thread)
            continue;
        /* insertion into the sorted prefix */
        int i = MIN(n, max);
        if (i == max && (max == 0 || out[max - 1] < p->p_pid)) {
            n++;
            continue;
        }
        while (i > 0 && out[i - 1] > p->p_pid) {
            if (i < max)
                out[i] = out[i - 1];
            i--;
        }
        out[i] = p->p_pid;
        n++;
    }
    mutex_exit(&proc_lock);
    return n;
}

int proc_ppid_of(struct proc *p)
{
    mutex_enter(&proc_lock);
    int ppid = p->p_parent ? p->p_parent->p_pid : 0;
    mutex_exit(&proc_lock);
    return ppid;
}

struct vnode *proc_cwd_hold(struct proc *p)
{
    mutex_enter(&p->p_fdlock);
    struct vnode *vp = p->p_cwd;
    if (vp)
        VN_HOLD(vp);
    mutex_exit(&p->p_fdlock);
    return vp;
}

struct vnode *proc_fd_hold(struct proc *p, int fd, int *flags)
{
    if (fd < 0 || fd >= NOFILE)
        return NULL;
    mutex_enter(&p->p_fdlock);
    struct file *fp = p->p_fd[fd];
    struct vnode *vp = fp ? fp->f_vp : NULL;
    if (vp) {
        VN_HOLD(vp);
        if (flags)
            *flags = fp->f_flags;
    }
    mutex_exit(&p->p_fdlock);
    return vp;
}

struct proc_image *proc_image_hold(struct proc *p)
{
    mutex_enter(&proc_lock);
    struct proc_image *im = p->p_image;
    if (im)
        __atomic_add_fetch(&im->refs, 1, __ATOMIC_RELAXED);
    mutex_exit(&proc_lock);
    return im;
}

void proc_image_rele(struct proc_image *im)
{
    if (im && __atomic_sub_fetch(&im->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        kfree(im->exe);
        kfree(im);
    }
}

void proc_share_image(struct proc *child, struct proc *parent)
{
    child->p_image = proc_image_hold(parent);
}

/* The absolute form of path, relative to p's current directory. */
static char *absolute_path(struct proc *p, const char *path)
{
    char *out = kmalloc(PATH_MAX);
    if (!out)
        return NULL;
    size_t len = 0;
    if (path[0] != '/') {
        struct vnode *cwd = p->p_cwd ? p->p_cwd : rootdir;
        int n = cwd ? proc_dir_path(cwd, out, PATH_MAX) : -ENOENT;
        if (n <= 0) {
            kfree(out);
            return NULL;
        }
        len = (size_t)n - 1;
        if (len && out[len - 1] != '/' && len + 1 < PATH_MAX)
            out[len++] = '/';
    }
    strlcpy(out + len, path, PATH_MAX - len);
    return out;
}

/* The file a path names, with the symbolic links of its last component
 * followed (as Linux's exe link shows it: /bin/sh is /bin/busybox, and
 * /proc/self/exe the program itself): a new absolute path, or NULL. */
static char *resolved_path(struct proc *p, const char *path)
{
    char *cur = absolute_path(p, path);
    for (int links = 0; cur && links < 8; links++) {
        struct vnode *vp;
        if (lookupname(cur, NULL, false, &vp, p->p_cred))
            break;
        bool link = vp->v_type == VLNK;
        char *text = link ? kmalloc(PATH_MAX) : NULL;
        struct uio uio = { .uio_base = text, .uio_resid = PATH_MAX - 1 };
        int err = !link ? 1 : !text ? -ENOMEM : VOP_READLINK(vp, &uio, p->p_cred);
        VN_RELE(vp);
        if (err) {
            kfree(text);
            break;
        }
        text[PATH_MAX - 1 - uio.uio_resid] = 0;
        char *next;
        if (text[0] == '/') {
            next = text;
        } else {
            /* relative to the link's directory */
            next = kmalloc(PATH_MAX);
            size_t dirlen = 0;
            for (size_t i = 0; cur[i]; i++)
                if (cur[i] == '/')
                    dirlen = i + 1;
            if (next) {
                memcpy(next, cur, dirlen);
                strlcpy(next + dirlen, text, PATH_MAX - dirlen);
            }
            kfree(text);
        }
        kfree(cur);
        cur = next;
    }
    return cur;
}

/* The image's arguments: the first argc strings of ea, at most a page. */
#define CMDLINE_MAX 4096

void proc_set_image(struct proc *p, const char *path, const struct execargs *ea,
                    const uint64_t *auxv, size_t auxwords)
{
    size_t len = 0;
    for (int i = 0; i < ea->argc && len < ea->len; i++)
        len += strlen(ea->buf + len) + 1;
    len = MIN(len, (size_t)CMDLINE_MAX);
    struct proc_image *im = kmalloc(sizeof *im + len);
    if (!im)
        return;                         /* /proc keeps showing the old one */
    im->refs = 1;
    im->exe = resolved_path(p, path);
    im->cmdlen = len;
    im->args_at = ea->args_at;
    im->auxwords = MIN(auxwords, (size_t)PROC_AUXV_WORDS);
    memcpy(im->auxv, auxv, im->auxwords * sizeof *auxv);
    memcpy(im->cmdline, ea->buf, len);
    if (len)
        im->cmdline[len - 1] = 0;
    mutex_enter(&proc_lock);
    struct proc_image *old = p->p_image;
    p->p_image = im;
    mutex_exit(&proc_lock);
    proc_image_rele(old);
}
