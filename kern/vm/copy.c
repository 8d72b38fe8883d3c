/*
 * copyin, copyout and copyinstr (and copyin_struct, built on copyin):
 * the only ways the kernel touches user memory.
 *
 * Theory.  A user range is first checked against the user limit: a
 * kernel address or a range that wraps is -EFAULT without any access.
 * The copy itself is user_copy or user_strncpy (kern/vm/usercopy.asm), which
 * open the SMAP window (stac) for the copy alone.  A page fault inside
 * them on a user address is resolved like a user fault (demand zero,
 * demand load, copy-on-write) by as_fault on the address space loaded on
 * this CPU, and the instruction restarts; a fault as_fault cannot resolve
 * moves the saved rip to user_copy_fault, which closes the window and
 * returns -EFAULT.  So no bad pointer from a user program can panic the
 * kernel.  A fault that finds no memory is reported to the caller
 * (user_trap, kern/proc/syscall.c), which kills the process (out of
 * memory): processes are a layer above this one.
 *
 * No lock is held here; as_fault takes the address space's own.
 */
#include <kern/vm/as.h>
#include <kern/arch/trap.h>
#include <kern/arch/arch.h>
#include <kern/lib/errno.h>
#include <kern/lib/string.h>

extern int user_copy(void *dst, const void *src, size_t n);
extern long user_strncpy(char *dst, const char *src, size_t max);
extern char user_copy_start[], user_copy_end[], user_copy_fault[];

bool smap_enabled;

static bool user_range_ok(const void *uaddr, size_t len)
{
    uint64_t a = (uint64_t)uaddr;
    return a < USER_TOP && len <= USER_TOP - a;
}

int copyin(const void *uaddr, void *kaddr, size_t len)
{
    if (len == 0)
        return 0;
    if (!user_range_ok(uaddr, len))
        return -EFAULT;
    return user_copy(kaddr, uaddr, len);
}

int copyout(const void *kaddr, void *uaddr, size_t len)
{
    if (len == 0)
        return 0;
    if (!user_range_ok(uaddr, len))
        return -EFAULT;
    return user_copy(uaddr, kaddr, len);
}

long copyinstr(const char *uaddr, char *kaddr, size_t max)
{
    if (max == 0)
        return -ENAMETOOLONG;
    if (!user_range_ok(uaddr, 1))
        return -EFAULT;
    size_t room = USER_TOP - (uint64_t)uaddr;
    size_t lim = MIN(max, room);
    long n = user_strncpy(kaddr, uaddr, lim);
    if (n < 0)
        return n;
    if ((size_t)n == lim) {
        kaddr[lim - 1] = 0;
        return lim == max ? -ENAMETOOLONG : -EFAULT;
    }
    return n;
}

static inline void clac(void)
{
    if (smap_enabled)
        __asm__ volatile("clac" ::: "memory");
}

bool copy_fault_fixup(struct trapframe *tf, vaddr_t addr, fault_resolver resolve, int *errp)
{
    if (tf->rip < (uint64_t)user_copy_start || tf->rip >= (uint64_t)user_copy_end)
        return false;
    clac();             /* the window stays shut while we handle the fault */
    int err = -EFAULT;
    if (addr < USER_TOP) {
        if (tf->rflags & RFLAGS_IF)
            intr_enable();
        err = resolve(as_current(), addr, (tf->error & 2) ? FA_WRITE : FA_READ);
        intr_disable();
    }
    *errp = err;
    if (err)
        tf->rip = (uint64_t)user_copy_fault;
    return true;
}

int copyin_struct(void *kaddr, size_t ksize, const void *uaddr, size_t usize)
{
    memset(kaddr, 0, ksize);
    if (copyin(uaddr, kaddr, usize < ksize ? usize : ksize))
        return -EFAULT;
    for (size_t off = ksize; off < usize; off++) {
        uint8_t b;
        if (copyin((const char *)uaddr + off, &b, 1))
            return -EFAULT;
        if (b)
            return -E2BIG;
    }
    return 0;
}
