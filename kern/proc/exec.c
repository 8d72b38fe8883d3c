/*
 * exec: replace the calling process's image with an ELF64 program (static,
 * or dynamic through the interpreter its PT_INTERP names), or run a "#!"
 * script's interpreter.
 *
 * Theory.  The file must be a regular file the caller may execute.  A
 * script's first line names the interpreter and at most one argument;
 * the new argument list is interpreter [argument] path argv[1..] (one
 * level of interpreter only).  An ELF file must be a little-endian
 * x86-64 executable (ET_EXEC, or ET_DYN) whose PT_LOAD segments fit in
 * user space; anything else is -ENOEXEC.  An ET_EXEC program sits at its
 * own addresses; an ET_DYN one (a PIE, or a loader such as ld.so run by
 * name) at ELF_ET_DYN_BASE, Linux's base when randomisation is off, so a
 * loader run by name leaves 0x400000 to the ET_EXEC program it loads.
 * Each PT_LOAD becomes one private vnode segment of the new address space
 * covering its pages, with p_filesz bytes read from the file on demand and
 * zeros after them (the bss), and nothing is read now.
 *
 * A PT_INTERP names the program interpreter (glibc's ld.so): it is opened
 * and checked before the point of no return, with Linux's errors (missing:
 * -ENOENT; not executable: -EACCES; shorter than an ELF header: -EIO;
 * anything else wrong with it: -ELIBBAD), and mapped where mmap would put
 * it (below USER_MMAP_TOP, above the program's break), its span reserved
 * first so its segments keep their distances.  The new thread starts at
 * the interpreter's entry, which finds the program through the auxiliary
 * vector.
 *
 * The program file is the address space's a_exe (as_set_exe): writers are
 * refused with ETXTBSY while any address space runs it, and exec of a file
 * open for writing fails with ETXTBSY.
 *
 * Up to the point of no return (the new address space is complete) a
 * failure leaves the process as it was.  After it, the old address space
 * is freed (or, borrowed by vfork, handed back to the parent, which
 * wakes: proc_exec_commit) and the stack is written in the System V ABI
 * layout: argc, argv pointers, NULL, envp pointers, NULL, the auxiliary
 * vector (AT_HWCAP, AT_PAGESZ, AT_CLKTCK, AT_PHDR, AT_PHENT, AT_PHNUM,
 * AT_BASE, AT_FLAGS, AT_ENTRY, AT_UID, AT_EUID, AT_GID, AT_EGID,
 * AT_SECURE, AT_RANDOM, AT_HWCAP2, AT_EXECFN, AT_PLATFORM, AT_MINSIGSTKSZ,
 * AT_NULL), then the strings: arguments and environment, the executed path
 * (AT_EXECFN), "x86_64" (AT_PLATFORM) and the 16 random bytes at the top.
 * A failure there (no memory for the stack pages) kills the process.
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
#define ELF_ET_DYN_BASE 0x555555554000UL     /* Linux's, randomisation off */

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
    AUX_PLATFORM = 15, AUX_HWCAP = 16, AUX_HWCAP2 = 26, AUX_MINSIGSTKSZ = 51,
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

/* Where execveat starts: its directory, or the file itself
 * (AT_EMPTY_PATH), and AT_SYMLINK_NOFOLLOW; NULL for execve's start. */
struct exec_at {
    struct vnode *dir;          /* relative paths from here; NULL: the cwd */
    struct vnode *self;         /* run this file, not path's */
    bool nofollow;              /* a final symbolic link is ELOOP */
};

static int open_exec(const char *path, struct proc *p, const struct exec_at *at,
                     struct vnode **vpp);

struct image {
    struct vnode *vp;
    struct elf64_ehdr eh;
    struct elf64_phdr ph[MAX_PHNUM];
    uint64_t bias;              /* added to every p_vaddr: 0 for ET_EXEC */
    vaddr_t lo, hi;             /* the pages the PT_LOADs cover, before the bias */
    uint64_t align;             /* the largest p_align of a PT_LOAD (a power of two) */
    vaddr_t phdr_va, brk;
    char *interp;               /* PT_INTERP's path (kmalloc'd), or NULL */
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

static bool header_ok(const struct elf64_ehdr *eh)
{
    return !memcmp(eh->e_ident, "\177ELF", 4) && eh->e_ident[4] == 2 && eh->e_ident[5] == 1 &&
           eh->e_machine == EM_X86_64 && (eh->e_type == ET_EXEC || eh->e_type == ET_DYN) &&
           eh->e_phentsize == sizeof(struct elf64_phdr) && eh->e_phnum != 0 &&
           eh->e_phnum <= MAX_PHNUM;
}

/* PT_INTERP's path into im->interp: Linux's limits (2..PATH_MAX bytes,
 * NUL-terminated), else -ENOEXEC. */
static int read_interp(struct image *im, const struct elf64_phdr *ph, struct cred *cr)
{
    if (im->interp || ph->p_filesz < 2 || ph->p_filesz > PATH_MAX)
        return -ENOEXEC;
    im->interp = kmalloc(ph->p_filesz);
    if (!im->interp)
        return -ENOMEM;
    int err = read_exact(im->vp, im->interp, ph->p_filesz, ph->p_offset, cr);
    if (!err && im->interp[ph->p_filesz - 1] != 0)
        err = -ENOEXEC;
    return err;
}

/* One PT_LOAD's own consistency, before the bias is known. */
static bool load_ok(const struct elf64_phdr *ph)
{
    return ph->p_filesz <= ph->p_memsz && (ph->p_offset % PAGE_SIZE) == (ph->p_vaddr % PAGE_SIZE) &&
           ph->p_memsz <= USER_MMAP_TOP && ph->p_vaddr <= USER_MMAP_TOP &&
           ph->p_offset + ph->p_filesz >= ph->p_offset;
}

/* Check the header already in im->eh, read the program headers and note
 * the span of the PT_LOADs; an interpreter's own PT_INTERP is ignored, as
 * Linux does.  0 or -ENOEXEC (the caller makes that -ELIBBAD for an
 * interpreter). */
static int check_elf(struct image *im, struct cred *cr, bool is_interp)
{
    struct elf64_ehdr *eh = &im->eh;
    if (!header_ok(eh))
        return -ENOEXEC;
    int err = read_exact(im->vp, im->ph, eh->e_phnum * sizeof im->ph[0], eh->e_phoff, cr);
    if (err)
        return err;
    im->lo = ~0UL;
    im->align = PAGE_SIZE;
    for (int i = 0; i < eh->e_phnum && !err; i++) {
        const struct elf64_phdr *ph = &im->ph[i];
        if (ph->p_type == PT_INTERP && !is_interp)
            err = read_interp(im, ph, cr);
        if (ph->p_type != PT_LOAD)
            continue;
        if (!load_ok(ph))
            return -ENOEXEC;
        im->lo = MIN(im->lo, ALIGN_DOWN(ph->p_vaddr, PAGE_SIZE));
        im->hi = MAX(im->hi, ALIGN_UP(ph->p_vaddr + ph->p_memsz, PAGE_SIZE));
        if (ph->p_align > im->align && !(ph->p_align & (ph->p_align - 1)) &&
            ph->p_align <= (1UL << 21))
            im->align = ph->p_align;
    }
    if (err)
        return err;
    return im->lo < im->hi ? 0 : -ENOEXEC;
}

/* With the bias chosen: the segments must lie in user space; note where
 * the program headers and the break are.  0 or -ENOEXEC. */
static int set_bias(struct image *im, uint64_t bias)
{
    const struct elf64_ehdr *eh = &im->eh;
    im->bias = bias;
    if (im->lo + bias < USER_MIN || im->hi + bias > USER_MMAP_TOP || im->hi + bias < im->hi)
        return -ENOEXEC;
    im->phdr_va = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        const struct elf64_phdr *ph = &im->ph[i];
        if (ph->p_type == PT_LOAD && eh->e_phoff >= ph->p_offset &&
            eh->e_phoff < ph->p_offset + ph->p_filesz && !im->phdr_va)
            im->phdr_va = ph->p_vaddr + bias + (eh->e_phoff - ph->p_offset);
    }
    for (int i = 0; i < eh->e_phnum; i++)
        if (im->ph[i].p_type == PT_PHDR)
            im->phdr_va = im->ph[i].p_vaddr + bias;
    im->brk = im->hi + bias;
    return 0;
}

/* The main program's bias: 0 for ET_EXEC; an ET_DYN program (a PIE, or a
 * loader such as ld.so run by name) goes at ELF_ET_DYN_BASE, Linux's
 * address when randomisation is off, aligned as its segments ask. */
static int place_main(struct image *im)
{
    if (im->eh.e_type != ET_DYN)
        return set_bias(im, 0);
    return set_bias(im, ALIGN_UP(ELF_ET_DYN_BASE, im->align) - im->lo);
}

/* Open and check the interpreter named by PT_INTERP.  A missing one is
 * -ENOENT (vn_open's errors as they are), a short header -EIO and any
 * other fault in it -ELIBBAD, as on Linux. */
static int open_interp(struct image *im, struct image *ip, struct proc *p)
{
    int err = open_exec(im->interp, p, NULL, &ip->vp);
    if (err)
        return err;
    size_t got = 0;
    err = vn_rdwr(ip->vp, false, &ip->eh, sizeof ip->eh, 0, 0, &got, p->p_cred);
    if (!err && got < sizeof ip->eh)
        err = -EIO;
    if (!err && check_elf(ip, p->p_cred, true))
        err = -ELIBBAD;
    return err;
}

static int prot_of(uint32_t pf)
{
    return ((pf & PF_R) ? PROT_READ : 0) | ((pf & PF_W) ? PROT_WRITE : 0) |
           ((pf & PF_X) ? PROT_EXEC : 0);
}

/* Map each PT_LOAD of im at its biased address: 0 or -errno. */
static int map_image(struct as *as, struct image *im)
{
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
        if (r < 0)
            return (int)r;
    }
    return 0;
}

/* The interpreter goes where mmap would put it (the highest free range),
 * unless it is an ET_EXEC with addresses of its own: a PROT_NONE
 * reservation of its whole span fixes the bias, then its segments
 * replace the parts they cover, leaving the holes reserved as Linux's
 * loader does. */
static int map_interp(struct as *as, struct image *ip)
{
    uint64_t bias = 0;
    if (ip->eh.e_type == ET_DYN) {
        size_t span = ip->hi - ip->lo + ip->align - PAGE_SIZE;
        int64_t r = as_map(as, 0, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0, 0);
        if (r < 0)
            return (int)r;
        bias = ALIGN_UP((vaddr_t)r, ip->align) - ip->lo;
    }
    int err = set_bias(ip, bias);
    return err ? err : map_image(as, ip);
}

static struct as *build_as(struct image *im, struct image *ip, int *err)
{
    struct as *as = as_create();
    if (!as) {
        *err = -ENOMEM;
        return NULL;
    }
    *err = as_set_exe(as, im->vp);      /* ETXTBSY while it is open for writing */
    if (!*err)
        *err = map_image(as, im);
    if (!*err) {
        int64_t r = as_map(as, USER_STACK_TOP - USER_STACK_SIZE, USER_STACK_SIZE,
                           PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                           NULL, 0, 0);
        *err = r < 0 ? (int)r : 0;
    }
    as->a_brk_base = as->a_brk = im->brk;       /* before the interpreter: mmap stays above it */
    if (!*err && ip)
        *err = map_interp(as, ip);
    if (*err) {
        as_destroy(as);
        return NULL;
    }
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

/* AT_HWCAP on x86-64 is CPUID leaf 1's EDX, as Linux gives it. */
static uint64_t hwcap(void)
{
    uint32_t a, b, c, d;
    cpuid(1, 0, &a, &b, &c, &d);
    return d;
}

/* The strings above the vectors: the 16 random bytes at the top, then
 * the platform name, the executed path (AT_EXECFN), and the argument and
 * environment strings. */
struct stack_strings {
    vaddr_t rnd, platform, execfn, strs;
};

static const char platform_name[] = "x86_64";

static int put_strings(struct execargs *ea, const char *path, struct stack_strings *ss)
{
    uint64_t rnd[2] = { random_word(), random_word() };
    size_t plen = strlen(path) + 1;
    ss->rnd = USER_STACK_TOP - 16;
    ss->platform = ss->rnd - sizeof platform_name;
    ss->execfn = ss->platform - plen;
    ss->strs = ALIGN_DOWN(ss->execfn - ea->len, 16);
    int err = copyout(rnd, (void *)ss->rnd, sizeof rnd);
    if (!err)
        err = copyout(platform_name, (void *)ss->platform, sizeof platform_name);
    if (!err)
        err = copyout(path, (void *)ss->execfn, plen);
    if (!err)
        err = copyout(ea->buf, (void *)ss->strs, ea->len);
    return err;
}

/* The auxiliary vector's entries into v (room for AUX_WORDS words): the
 * number of words written, AUX_NULL's pair included. */
#define AUX_WORDS (2 * 22)

static size_t put_auxv(uint64_t *v, struct image *im, struct image *ip,
                       const struct stack_strings *ss, struct cred *cr)
{
    bool secure = im->secure || cr->cr_uid != cr->cr_ruid || cr->cr_gid != cr->cr_rgid;
    const uint64_t aux[][2] = {
        { AUX_HWCAP, hwcap() }, { AUX_PAGESZ, PAGE_SIZE }, { AUX_CLKTCK, 100 },
        { AUX_PHDR, im->phdr_va }, { AUX_PHENT, sizeof(struct elf64_phdr) },
        { AUX_PHNUM, im->eh.e_phnum }, { AUX_BASE, ip ? ip->bias : 0 },
        { AUX_FLAGS, 0 }, { AUX_ENTRY, im->eh.e_entry + im->bias },
        { AUX_UID, cr->cr_ruid }, { AUX_EUID, cr->cr_uid }, { AUX_GID, cr->cr_rgid },
        { AUX_EGID, cr->cr_gid }, { AUX_SECURE, secure }, { AUX_RANDOM, ss->rnd },
        { AUX_HWCAP2, 0 }, { AUX_EXECFN, ss->execfn }, { AUX_PLATFORM, ss->platform },
        { AUX_MINSIGSTKSZ, sig_frame_min_size() },
    };
    _Static_assert(2 * (ARRAY_SIZE(aux) + 1) <= AUX_WORDS, "AUX_WORDS");
    _Static_assert(AUX_WORDS <= PROC_AUXV_WORDS, "PROC_AUXV_WORDS");
    size_t w = 0;
    for (size_t i = 0; i < ARRAY_SIZE(aux); i++) {
        v[w++] = aux[i][0];
        v[w++] = aux[i][1];
    }
    v[w++] = AUX_NULL;
    v[w++] = 0;
    return w;
}

/* Lay out the stack in the loaded address space, the auxiliary vector
 * kept in auxv too (AUX_WORDS words; *auxwords of them used); 0 or
 * -EFAULT/-ENOMEM. */
static int build_stack(struct image *im, struct image *ip, struct execargs *ea,
                       const char *path, vaddr_t *spp, struct cred *cr, uint64_t *auxv,
                       size_t *auxwords)
{
    struct stack_strings ss;
    int err = put_strings(ea, path, &ss);
    if (err)
        return err;
    ea->args_at = ss.strs;
    int nvec = ea->argc + 1 + ea->envc + 1;
    size_t words = 1 + nvec + AUX_WORDS;
    uint64_t *v = kmalloc(words * 8);
    if (!v)
        return -ENOMEM;
    size_t w = 0, off = 0;
    v[w++] = ea->argc;
    for (int i = 0; i < ea->argc; i++) {
        v[w++] = ss.strs + off;
        off += strlen(ea->buf + off) + 1;
    }
    v[w++] = 0;
    for (int i = 0; i < ea->envc; i++) {
        v[w++] = ss.strs + off;
        off += strlen(ea->buf + off) + 1;
    }
    v[w++] = 0;
    *auxwords = put_auxv(v + w, im, ip, &ss, cr);
    memcpy(auxv, v + w, *auxwords * sizeof *v);
    w += *auxwords;
    vaddr_t sp = ALIGN_DOWN(ss.strs - w * 8, 16);
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

static int open_exec(const char *path, struct proc *p, const struct exec_at *at,
                     struct vnode **vpp)
{
    struct vnode *vp;
    int err;
    if (at && at->self)
        err = vn_open_vnode(at->self, O_RDONLY, &vp, p->p_cred);
    else
        err = vn_open(path, at && at->dir ? at->dir : p->p_cwd,
                      O_RDONLY | (at && at->nofollow ? O_NOFOLLOW : 0), 0, &vp, p->p_cred);
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

/* The program's checks, its place, and its interpreter if it names one
 * (*ipp, to be freed with image_free). */
static int check_program(struct image *im, struct image **ipp, struct proc *p)
{
    int err = check_elf(im, p->p_cred, false);
    if (!err)
        err = place_main(im);
    if (err || !im->interp)
        return err;
    *ipp = kzalloc(sizeof **ipp);
    if (!*ipp)
        return -ENOMEM;
    return open_interp(im, *ipp, p);
}

static void image_free(struct image *im, struct cred *cr)
{
    if (!im)
        return;
    if (im->vp)
        vn_close(im->vp, O_RDONLY, cr);
    kfree(im->interp);
    kfree(im);
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
    return proc_exec_at(path, NULL, NULL, false, ea, tf);
}

int proc_exec_at(const char *path, struct vnode *dir, struct vnode *self, bool nofollow,
                 struct execargs *ea, struct trapframe *tf)
{
    const struct exec_at at = { dir, self, nofollow };
    struct thread *t = curthread();
    struct proc *p = t->proc;
    struct image *im = kzalloc(sizeof *im), *ip = NULL;
    if (!im)
        return -ENOMEM;
    char interp[128], arg[128];
    const char *file = path;
    int err;
    for (int depth = 0;; depth++) {
        err = open_exec(file, p, depth == 0 ? &at : NULL, &im->vp);
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
            err = check_program(im, &ip, p);
        if (err)
            goto out;
        break;
    }
    struct as *as = build_as(im, ip, &err);
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
    uint64_t auxv[AUX_WORDS];
    size_t auxwords = 0;
    err = build_stack(im, ip, ea, path, &sp, p->p_cred, auxv, &auxwords);
    if (err) {
        proc_kill_current(SIGKILL, "exec: no memory for the stack");
        err = 0;
    }
    fd_close_on_exec(p);
    set_comm(p, path);
    proc_set_image(p, file, ea, auxv, auxwords);
    t->fs_base = 0;
    wrmsr(MSR_FS_BASE, 0);
    fpu_reset_current();
    t->lwp->l_gs_base = 0;
    wrmsr(MSR_KGS_BASE, 0);
    uint64_t nr = tf->error;        /* the call's number (orig_rax) stays */
    memset(tf, 0, sizeof *tf);
    tf->vector = VEC_SYSCALL_IRET;
    tf->error = nr;
    tf->rip = ip ? ip->eh.e_entry + ip->bias : im->eh.e_entry + im->bias;
    tf->rsp = sp;
    tf->cs = SEL_UCODE;
    tf->ss = SEL_UDATA;
    tf->rflags = RFLAGS_IF | 0x2;
out:
    image_free(ip, p->p_cred);
    image_free(im, p->p_cred);
    return err;
}
