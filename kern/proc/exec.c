/*
 * exec: replace the calling process's image with a static ELF64 program,
 * or run a "#!" script's interpreter.
 *
 * Theory.  The file must be a regular file the caller may execute.  A
 * script's first line names the interpreter and at most one argument;
 * the new argument list is interpreter [argument] path argv[1..] (one
 * level of interpreter only).  An ELF file must be a little-endian
 * x86-64 executable (ET_EXEC, or ET_DYN without an interpreter, loaded at
 * ELF_DYN_BASE) whose PT_LOAD segments fit in user space; anything else is
 * -ENOEXEC.  Each PT_LOAD becomes one private vnode segment of the new
 * address space covering its pages, with p_filesz bytes read from the file
 * on demand and zeros after them (the bss), and nothing is read now.
 *
 * Up to the point of no return (the new address space is complete) a
 * failure leaves the process as it was.  After it, the old address space
 * is freed (or, borrowed by vfork, handed back to the parent, which
 * wakes: proc_exec_commit) and the stack is written in the System V ABI
 * layout: argc, argv pointers, NULL, envp pointers, NULL, the auxiliary
 * vector (AUX_PHDR, AUX_PHENT, AUX_PHNUM, AUX_PAGESZ, AUX_ENTRY, AUX_UID,
 * AUX_EUID, AUX_GID, AUX_EGID, AUX_SECURE, AUX_RANDOM, AUX_EXECFN,
 * AUX_NULL), then the strings and the 16 random bytes at the top.  A
 * failure there (no memory for the stack pages) kills the process.
 *
 * No lock is held across exec except those of the calls it makes.
 */
#include <kern/proc/proc.h>
#include <kern/vm/as.h>
#include <kern/vfs/vfs.h>
#include <kern/vfs/cred.h>
#include <kern/sched/thread.h>
#include <kern/arch/trap.h>
#include <kern/arch/cpu.h>
#include <kern/arch/arch.h>
#include <kern/vm/kmem.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define ARG_MAX         (128 * 1024)
#define ELF_DYN_BASE    0x400000UL

struct elf64_ehdr {
    uint8_t e_ident[16];
    uint16_t e_type, e_machine;
    uint32_t e_version;
    uint64_t e_entry, e_phoff, e_shoff;
    uint32_t e_flags;
    uint16_t e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx;
};

struct elf64_phdr {
    uint32_t p_type, p_flags;
    uint64_t p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
};

#define ET_EXEC 2
#define ET_DYN  3
#define EM_X86_64 62
#define PT_LOAD 1
#define PT_INTERP 3
#define PT_PHDR 6
#define PF_X 1
#define PF_W 2
#define PF_R 4
#define MAX_PHNUM 64

enum {
    AUX_NULL = 0, AUX_PHDR = 3, AUX_PHENT = 4, AUX_PHNUM = 5, AUX_PAGESZ = 6, AUX_BASE = 7,
    AUX_FLAGS = 8, AUX_ENTRY = 9, AUX_UID = 11, AUX_EUID = 12, AUX_GID = 13, AUX_EGID = 14,
    AUX_CLKTCK = 17, AUX_SECURE = 23, AUX_RANDOM = 25, AUX_EXECFN = 31,
};

/* ---- argument buffers ---- */

int execargs_init(struct execargs *ea)
{
    memset(ea, 0, sizeof *ea);
    ea->cap = ARG_MAX;
    ea->buf = kmalloc(ea->cap);
    return ea->buf ? 0 : -ENOMEM;
}

void execargs_free(struct execargs *ea)
{
    kfree(ea->buf);
    ea->buf = NULL;
}

int execargs_add(struct execargs *ea, const char *s, size_t len)
{
    if (ea->len + len + 1 > ea->cap)
        return -E2BIG;
    memcpy(ea->buf + ea->len, s, len);
    ea->buf[ea->len + len] = 0;
    ea->len += len + 1;
    return 0;
}

/* ---- loading ---- */

struct image {
    struct vnode *vp;
    struct elf64_ehdr eh;
    struct elf64_phdr ph[MAX_PHNUM];
    uint64_t bias;
    vaddr_t phdr_va, brk;
    bool secure;                /* the set-id bits changed the ids (AT_SECURE, as are
                                   effective ids other than the real ones) */
};

static int read_exact(struct vnode *vp, void *buf, size_t len, uint64_t off, struct cred *cr)
{
    size_t got;
    int err = vn_rdwr(vp, false, buf, len, off, 0, &got, cr);
    if (err)
        return err;
    return got == len ? 0 : -ENOEXEC;
}

static int check_elf(struct image *im, struct cred *cr)
{
    struct elf64_ehdr *eh = &im->eh;
    if (memcmp(eh->e_ident, "\177ELF", 4) || eh->e_ident[4] != 2 || eh->e_ident[5] != 1 ||
        eh->e_machine != EM_X86_64 || (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) ||
        eh->e_phentsize != sizeof(struct elf64_phdr) || eh->e_phnum == 0 ||
        eh->e_phnum > MAX_PHNUM)
        return -ENOEXEC;
    int err = read_exact(im->vp, im->ph, eh->e_phnum * sizeof im->ph[0], eh->e_phoff, cr);
    if (err)
        return err;
    im->bias = eh->e_type == ET_DYN ? ELF_DYN_BASE : 0;
    bool any_load = false;
    for (int i = 0; i < eh->e_phnum; i++) {
        const struct elf64_phdr *ph = &im->ph[i];
        if (ph->p_type == PT_INTERP)
            return -ENOEXEC;            /* dynamic programs: no loader here */
        if (ph->p_type != PT_LOAD)
            continue;
        any_load = true;
        uint64_t va = ph->p_vaddr + im->bias;
        if (ph->p_filesz > ph->p_memsz || (ph->p_offset % PAGE_SIZE) != (ph->p_vaddr % PAGE_SIZE) ||
            va < USER_MIN || ph->p_memsz > USER_MMAP_TOP || va + ph->p_memsz > USER_MMAP_TOP ||
            ph->p_offset + ph->p_filesz < ph->p_offset)
            return -ENOEXEC;
        if (eh->e_phoff >= ph->p_offset && eh->e_phoff < ph->p_offset + ph->p_filesz)
            im->phdr_va = va + (eh->e_phoff - ph->p_offset);
        im->brk = MAX(im->brk, ALIGN_UP(va + ph->p_memsz, PAGE_SIZE));
    }
    for (int i = 0; i < eh->e_phnum; i++)
        if (im->ph[i].p_type == PT_PHDR)
            im->phdr_va = im->ph[i].p_vaddr + im->bias;
    return any_load ? 0 : -ENOEXEC;
}

static int prot_of(uint32_t pf)
{
    return ((pf & PF_R) ? PROT_READ : 0) | ((pf & PF_W) ? PROT_WRITE : 0) |
           ((pf & PF_X) ? PROT_EXEC : 0);
}

static struct as *build_as(struct image *im, int *err)
{
    struct as *as = as_create();
    if (!as) {
        *err = -ENOMEM;
        return NULL;
    }
    for (int i = 0; i < im->eh.e_phnum; i++) {
        const struct elf64_phdr *ph = &im->ph[i];
        if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
            continue;
        vaddr_t va = ph->p_vaddr + im->bias;
        vaddr_t start = ALIGN_DOWN(va, PAGE_SIZE);
        vaddr_t end = ALIGN_UP(va + ph->p_memsz, PAGE_SIZE);
        uint64_t off = ALIGN_DOWN(ph->p_offset, PAGE_SIZE);
        int64_t r = as_map(as, start, end - start, prot_of(ph->p_flags), MAP_PRIVATE | MAP_FIXED,
                           im->vp, off, (va - start) + ph->p_filesz);
        if (r < 0) {
            as_destroy(as);
            *err = (int)r;
            return NULL;
        }
    }
    int64_t r = as_map(as, USER_STACK_TOP - USER_STACK_SIZE, USER_STACK_SIZE,
                       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, 0);
    if (r < 0) {
        as_destroy(as);
        *err = (int)r;
        return NULL;
    }
    as->a_brk_base = as->a_brk = im->brk;
    return as;
}

/* ---- the new stack ---- */

static uint64_t random_word(void)
{
    uint64_t x = rdtsc() ^ ((uint64_t)cpu_id() << 56);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdUL;
    x ^= x >> 33;
    return x;
}

/* Lay out the stack in the loaded address space; 0 or -EFAULT/-ENOMEM. */
static int build_stack(struct image *im, struct execargs *ea, vaddr_t *spp, struct cred *cr)
{
    vaddr_t top = USER_STACK_TOP;
    uint64_t rnd[2] = { random_word(), random_word() };
    vaddr_t rnd_va = top - 16;
    vaddr_t strs = ALIGN_DOWN(rnd_va - ea->len, 16);
    int nvec = ea->argc + 1 + ea->envc + 1;
    int naux = 15;              /* 14 entries and AUX_NULL */
    size_t words = 1 + nvec + 2 * naux;
    vaddr_t sp = ALIGN_DOWN(strs - words * 8, 16);
    uint64_t *v = kmalloc(words * 8);
    if (!v)
        return -ENOMEM;
    size_t w = 0, off = 0;
    v[w++] = ea->argc;
    vaddr_t execfn = strs;
    for (int i = 0; i < ea->argc; i++) {
        v[w++] = strs + off;
        off += strlen(ea->buf + off) + 1;
    }
    v[w++] = 0;
    for (int i = 0; i < ea->envc; i++) {
        v[w++] = strs + off;
        off += strlen(ea->buf + off) + 1;
    }
    v[w++] = 0;
    const uint64_t aux[][2] = {
        { AUX_PHDR, im->phdr_va }, { AUX_PHENT, sizeof(struct elf64_phdr) },
        { AUX_PHNUM, im->eh.e_phnum }, { AUX_PAGESZ, PAGE_SIZE }, { AUX_BASE, 0 },
        { AUX_FLAGS, 0 }, { AUX_ENTRY, im->eh.e_entry + im->bias },
        { AUX_UID, cr->cr_ruid }, { AUX_EUID, cr->cr_uid }, { AUX_GID, cr->cr_rgid },
        { AUX_EGID, cr->cr_gid }, { AUX_SECURE, im->secure || cr->cr_uid != cr->cr_ruid || cr->cr_gid != cr->cr_rgid }, { AUX_RANDOM, rnd_va }, { AUX_EXECFN, execfn },
    };
    for (size_t i = 0; i < ARRAY_SIZE(aux); i++) {
        v[w++] = aux[i][0];
        v[w++] = aux[i][1];
    }
    v[w++] = AUX_NULL;
    v[w++] = 0;
    int err = copyout(rnd, (void *)rnd_va, sizeof rnd);
    if (!err)
        err = copyout(ea->buf, (void *)strs, ea->len);
    if (!err)
        err = copyout(v, (void *)sp, w * 8);
    kfree(v);
    *spp = sp;
    return err;
}

/* ---- scripts ---- */

/* Parse "#!interp [arg]" from the first line in hdr (n bytes). */
static int parse_script(const char *hdr, size_t n, char *interp, char *arg)
{
    size_t i = 2, end = 2;
    while (end < n && hdr[end] != '\n')
        end++;
    if (end == n)
        return -ENOEXEC;
    while (i < end && (hdr[i] == ' ' || hdr[i] == '\t'))
        i++;
    size_t s = i;
    while (i < end && hdr[i] != ' ' && hdr[i] != '\t')
        i++;
    if (i == s || i - s >= 128)
        return -ENOEXEC;
    memcpy(interp, hdr + s, i - s);
    interp[i - s] = 0;
    while (i < end && (hdr[i] == ' ' || hdr[i] == '\t'))
        i++;
    size_t e = end;
    while (e > i && (hdr[e - 1] == ' ' || hdr[e - 1] == '\t' || hdr[e - 1] == '\r'))
        e--;
    if (e - i >= 128)
        return -ENOEXEC;
    memcpy(arg, hdr + i, e - i);
    arg[e - i] = 0;
    return 0;
}

/* Rewrite ea as: interp [arg] path argv[1..] env... */
static int script_args(struct execargs *ea, const char *interp, const char *arg, const char *path)
{
    struct execargs n;
    int err = execargs_init(&n);
    if (err)
        return err;
    err = execargs_add(&n, interp, strlen(interp));
    n.argc = 1;
    if (!err && arg[0]) {
        err = execargs_add(&n, arg, strlen(arg));
        n.argc++;
    }
    if (!err) {
        err = execargs_add(&n, path, strlen(path));
        n.argc++;
    }
    size_t off = ea->argc ? strlen(ea->buf) + 1 : 0;   /* skip argv[0] */
    if (!err && off <= ea->len && ea->len - off + n.len > n.cap)
        err = -E2BIG;
    if (!err) {
        memcpy(n.buf + n.len, ea->buf + off, ea->len - off);
        n.len += ea->len - off;
        n.argc += ea->argc ? ea->argc - 1 : 0;
        n.envc = ea->envc;
    }
    if (err) {
        execargs_free(&n);
        return err;
    }
    execargs_free(ea);
    *ea = n;
    return 0;
}

static int open_exec(const char *path, struct proc *p, struct vnode **vpp)
{
    struct vnode *vp;
    int err = vn_open(path, p->p_cwd, O_RDONLY, 0, &vp, p->p_cred);
    if (err)
        return err;
    if (vp->v_type != VREG)
        err = -EACCES;
    else
        err = VOP_ACCESS(vp, VEXEC, p->p_cred);
    if (err) {
        vn_close(vp, O_RDONLY, p->p_cred);
        return err;
    }
    *vpp = vp;
    return 0;
}

static void set_comm(struct proc *p, const char *path)
{
    const char *base = path;
    for (const char *q = path; *q; q++)
        if (*q == '/' && q[1])
            base = q + 1;
    strlcpy(p->p_comm, base, sizeof p->p_comm);
}

int proc_exec(const char *path, struct execargs *ea, struct trapframe *tf)
{
    struct thread *t = curthread();
    struct proc *p = t->proc;
    struct image *im = kzalloc(sizeof *im);
    if (!im)
        return -ENOMEM;
    char interp[128], arg[128];
    const char *file = path;
    int err;
    for (int depth = 0;; depth++) {
        err = open_exec(file, p, &im->vp);
        if (err)
            goto out;
        size_t hlen = 0;
        err = vn_rdwr(im->vp, false, &im->eh, sizeof im->eh, 0, 0, &hlen, p->p_cred);
        const char *hdr = (const char *)&im->eh;
        if (!err && hlen >= 2 && hdr[0] == '#' && hdr[1] == '!' && depth == 0) {
            char line[256];
            size_t got = 0;
            err = vn_rdwr(im->vp, false, line, sizeof line, 0, 0, &got, p->p_cred);
            if (!err)
                err = parse_script(line, got, interp, arg);
            if (!err)
                err = script_args(ea, interp, arg, path);
            vn_close(im->vp, O_RDONLY, p->p_cred);
            im->vp = NULL;
            if (err)
                goto out;
            file = interp;
            continue;
        }
        if (!err && hlen < sizeof im->eh)
            err = -ENOEXEC;
        if (!err)
            err = check_elf(im, p->p_cred);
        if (err)
            goto out;
        break;
    }
    struct as *as = build_as(im, &err);
    if (!as)
        goto out;

    /* The point of no return.  The old address space goes once this CPU
     * has the new one loaded: freed, or back to a vfork parent.  The
     * process's other threads end first (kern/proc/lwp.c). */
    lwp_end_others(p);
    struct as *old = p->p_as;
    p->p_as = as;
    t->as = as;
    as_activate(as);
    proc_exec_commit(p, old);
    im->secure = proc_exec_setid(p, im->vp);    /* kern/proc/sys_admin.c */
    vaddr_t sp = 0;
    err = build_stack(im, ea, &sp, p->p_cred);
    if (err) {
        proc_kill_current(SIGKILL, "exec: no memory for the stack");
        err = 0;
    }
    fd_close_on_exec(p);
    set_comm(p, path);
    proc_set_image(p, file, ea);
    t->fs_base = 0;
    wrmsr(MSR_FS_BASE, 0);
    fpu_reset_current();
    t->lwp->l_gs_base = 0;
    wrmsr(MSR_KGS_BASE, 0);
    memset(tf, 0, sizeof *tf);
    tf->rip = im->eh.e_entry + im->bias;
    tf->rsp = sp;
    tf->cs = SEL_UCODE;
    tf->ss = SEL_UDATA;
    tf->rflags = RFLAGS_IF | 0x2;
out:
    if (im->vp)
        vn_close(im->vp, O_RDONLY, p->p_cred);
    kfree(im);
    return err;
}
