/*
 * fpu: the user's floating-point and vector registers (x87, SSE, AVX).
 *
 * Theory.  The kernel itself never uses these registers, so a thread's
 * user values stay in them while it runs in the kernel, and they are
 * switched eagerly: saved into the thread's area (its LWP's l_fpu) when its thread
 * is switched out, loaded when it is switched in (user_switch).
 *
 * When the CPU has XSAVE, each CPU sets CR4.OSXSAVE and programs XCR0 with
 * the state components the CPU offers among x87, SSE and AVX (the upper
 * halves of the ymm registers), so user programs -- glibc's choice of its
 * AVX2 string functions among them -- see AVX enabled as on Linux, and the
 * area is saved and loaded with XSAVE/XRSTOR in the standard (not
 * compacted) format, CPUID leaf 0xD's size for those components.  Without
 * XSAVE the area is FXSAVE's 512 bytes.  AVX-512's components are left
 * off: their 2 KiB more would not fit l_fpu (FPU_AREA_MAX).
 *
 * Signal frames carry the area as Linux's do (arch/x86/kernel/fpu/signal.c
 * is the reference for the layout): the sigcontext's fpstate points to a
 * 64-byte aligned copy of the area whose FXSAVE software-reserved bytes
 * (offset 464) hold struct _fpx_sw_bytes -- FP_XSTATE_MAGIC1, the frame's
 * extended size, the saved components, the area's size -- and the word
 * FP_XSTATE_MAGIC2 just after the area.  rt_sigreturn takes the whole area
 * back only when both magic words and the sizes agree, and only the x87
 * and SSE part otherwise; either way the header and MXCSR are made valid
 * first, so no frame a program writes can make XRSTOR fault.
 *
 * A tracer reads and replaces a stopped tracee's area (ptrace's FPU
 * regsets: fpu_regset_*), made valid as a signal frame's is.
 *
 * Locks: none.  l_fpu is touched only by its own thread, by the context
 * switch while that thread is off every CPU, or by its tracer while it
 * is stopped and off its CPU (kern/proc/sys_ptrace.c); xcr0 and the sizes
 * are set on the boot CPU before any user program runs ([c]).
 */
#include <kern/proc/proc.h>
#include <kern/sched/thread.h>
#include <kern/arch/arch.h>
#include <kern/arch/cpu.h>
#include <kern/vm/as.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define CR4_OSXSAVE     (1UL << 18)
#define CPUID1_XSAVE    (1u << 26)
#define XFEATURE_X87    1UL
#define XFEATURE_SSE    2UL
#define XFEATURE_AVX    4UL
#define FXSAVE_SIZE     512
#define XSAVE_HDR_SIZE  64
#define SW_BYTES_OFF    464             /* struct _fpx_sw_bytes in the FXSAVE area */
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#define MXCSR_OFF       24
#define MXCSR_MASK_OFF  28

_Static_assert(FPU_AREA_MAX >= FXSAVE_SIZE + XSAVE_HDR_SIZE + 256, "l_fpu holds x87+SSE+AVX");

/* Linux's struct _fpx_sw_bytes. */
struct fpx_sw_bytes {
    uint32_t magic1, extended_size;
    uint64_t xfeatures;
    uint32_t xstate_size, padding[7];
};

static bool use_xsave;                  /* [c] */
static uint64_t xcr0;                   /* [c] the components saved */
static uint32_t area_size = FXSAVE_SIZE;        /* [c] bytes XSAVE writes */
static uint32_t mxcsr_mask = 0xffbf;    /* [c] the MXCSR bits the CPU accepts */

static void xsetbv0(uint64_t v)
{
    __asm__ volatile("xsetbv" :: "c"(0), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static void fpu_save(uint8_t *area)
{
    if (use_xsave)
        __asm__ volatile("xsave64 %0" : "=m"(*(uint8_t (*)[FPU_AREA_MAX])area)
                         : "a"(~0u), "d"(~0u));
    else
        __asm__ volatile("fxsave64 %0" : "=m"(*(uint8_t (*)[FXSAVE_SIZE])area));
}

static void fpu_load(const uint8_t *area)
{
    if (use_xsave)
        __asm__ volatile("xrstor64 %0" :: "m"(*(const uint8_t (*)[FPU_AREA_MAX])area),
                         "a"(~0u), "d"(~0u));
    else
        __asm__ volatile("fxrstor64 %0" :: "m"(*(const uint8_t (*)[FXSAVE_SIZE])area));
}

/* The components this CPU offers that we save (x87, SSE, AVX). */
static uint64_t wanted_components(void)
{
    uint32_t a, b, c, d;
    cpuid(0, 0, &a, &b, &c, &d);
    if (a < 0xd)
        return 0;
    cpuid(1, 0, &a, &b, &c, &d);
    if (!(c & CPUID1_XSAVE))
        return 0;
    cpuid(0xd, 0, &a, &b, &c, &d);
    return (((uint64_t)d << 32) | a) & (XFEATURE_X87 | XFEATURE_SSE | XFEATURE_AVX);
}

void fpu_cpu_init(void)
{
    static bool probed;         /* the boot CPU comes first, before the APs start */
    bool boot = !probed;
    probed = true;
    uint64_t want = wanted_components();
    if (want & XFEATURE_SSE) {
        write_cr4(read_cr4() | CR4_OSXSAVE);
        xsetbv0(want);
    }
    if (!boot)
        return;
    uint8_t probe[FXSAVE_SIZE] __aligned(16);
    memset(probe, 0, sizeof probe);
    __asm__ volatile("fxsave64 %0" : "=m"(probe));
    if (*(uint32_t *)(probe + MXCSR_MASK_OFF))
        mxcsr_mask = *(uint32_t *)(probe + MXCSR_MASK_OFF);
    if (!(want & XFEATURE_SSE))
        return;
    uint32_t a, b, c, d;
    cpuid(0xd, 0, &a, &b, &c, &d);
    if (b > FPU_AREA_MAX)
        return;                 /* cannot happen with x87+SSE+AVX: FXSAVE it is */
    xcr0 = want;
    area_size = b;
    use_xsave = true;
}

/* ---- the process's area ---- */

/* Power-on values: FCW 0x37f (x87 exceptions masked), MXCSR 0x1f80 (SSE
 * exceptions masked, round to nearest), every other register zero. */
static void fpu_default(uint8_t *area)
{
    memset(area, 0, FPU_AREA_MAX);
    *(uint16_t *)area = 0x37f;
    *(uint32_t *)(area + MXCSR_OFF) = 0x1f80;
    if (use_xsave)
        *(uint64_t *)(area + FXSAVE_SIZE) = XFEATURE_X87 | XFEATURE_SSE;    /* xstate_bv */
}

void fpu_reset_current(void)
{
    struct lwp *l = curthread()->lwp;
    fpu_default(l->l_fpu);
    fpu_load(l->l_fpu);
}

/* fork: the child starts with the parent's live registers. */
void fpu_copy_current(struct lwp *to)
{
    fpu_save(to->l_fpu);
}

void fpu_switch(struct thread *prev, struct thread *next)
{
    if (prev && prev->lwp && prev != next)
        fpu_save(prev->lwp->l_fpu);
    if (next->lwp && prev != next)
        fpu_load(next->lwp->l_fpu);
}

/* ---- signal frames ---- */

size_t fpu_frame_size(void)
{
    return use_xsave ? area_size + 4 : FXSAVE_SIZE;     /* + FP_XSTATE_MAGIC2 */
}

bool fpu_frame_xstate(void)
{
    return use_xsave;
}

/* Write the live registers at uaddr (64-byte aligned, fpu_frame_size()
 * bytes) in Linux's layout: 0 or -EFAULT. */
int fpu_frame_out(vaddr_t uaddr)
{
    uint8_t area[FPU_AREA_MAX + 4] __aligned(64);
    fpu_save(area);
    if (use_xsave) {
        struct fpx_sw_bytes sw = {
            .magic1 = FP_XSTATE_MAGIC1, .extended_size = area_size + 4,
            .xfeatures = xcr0, .xstate_size = area_size,
        };
        memcpy(area + SW_BYTES_OFF, &sw, sizeof sw);
        uint32_t magic2 = FP_XSTATE_MAGIC2;
        memcpy(area + area_size, &magic2, 4);
    }
    return copyout(area, (void *)uaddr, fpu_frame_size());
}

/* Does the frame at area (already copied in, its legacy part at least)
 * carry a whole XSAVE area by Linux's rules? */
static bool frame_has_xstate(const uint8_t *area, vaddr_t uaddr)
{
    struct fpx_sw_bytes sw;
    memcpy(&sw, area + SW_BYTES_OFF, sizeof sw);
    if (sw.magic1 != FP_XSTATE_MAGIC1 || sw.xstate_size != area_size ||
        sw.extended_size != area_size + 4)
        return false;
    uint32_t magic2;
    return !copyin((const void *)(uaddr + area_size), &magic2, 4) && magic2 == FP_XSTATE_MAGIC2;
}

/* Load the registers from the frame at uaddr, made valid first: 0 or
 * -EFAULT (the caller kills). */
int fpu_frame_in(vaddr_t uaddr)
{
    uint8_t area[FPU_AREA_MAX] __aligned(64);
    memset(area, 0, sizeof area);
    if (copyin((const void *)uaddr, area, FXSAVE_SIZE))
        return -EFAULT;
    *(uint32_t *)(area + MXCSR_OFF) &= mxcsr_mask;
    *(uint32_t *)(area + MXCSR_MASK_OFF) = mxcsr_mask;
    if (use_xsave) {
        uint64_t bv = XFEATURE_X87 | XFEATURE_SSE;
        if (frame_has_xstate(area, uaddr)) {
            if (copyin((const void *)(uaddr + FXSAVE_SIZE), area + FXSAVE_SIZE,
                       area_size - FXSAVE_SIZE))
                return -EFAULT;
            bv = *(uint64_t *)(area + FXSAVE_SIZE) & xcr0;
        }
        memset(area + FXSAVE_SIZE, 0, XSAVE_HDR_SIZE);      /* xcomp_bv, reserved: 0 */
        *(uint64_t *)(area + FXSAVE_SIZE) = bv;
    }
    fpu_load(area);
    return 0;
}

/* ---- a tracer's view (ptrace's FPU regsets) ---- */

size_t fpu_regset_size(bool xstate)
{
    return !xstate ? FXSAVE_SIZE : use_xsave ? area_size : 0;
}

/* Linux's view of a stopped thread's area: FXSAVE's 512 bytes, or the
 * whole XSAVE area with the enabled components (XCR0) where Linux's
 * ptrace puts them, in the first word of the software-reserved bytes. */
void fpu_regset_get(const struct lwp *l, uint8_t *out, bool xstate)
{
    memcpy(out, l->l_fpu, fpu_regset_size(xstate));
    if (xstate) {
        memset(out + SW_BYTES_OFF, 0, FXSAVE_SIZE - SW_BYTES_OFF);
        memcpy(out + SW_BYTES_OFF, &xcr0, sizeof xcr0);
    }
}

/* Replace a stopped thread's area with in (fpu_regset_size bytes), made
 * valid as a signal frame's is: MXCSR's reserved bits off, and an XSAVE
 * header naming only the enabled components (an x87/SSE regset keeps the
 * AVX state it had). */
void fpu_regset_set(struct lwp *l, const uint8_t *in, bool xstate)
{
    uint8_t area[FPU_AREA_MAX] __aligned(64);
    memcpy(area, l->l_fpu, sizeof area);
    memcpy(area, in, fpu_regset_size(xstate));
    *(uint32_t *)(area + MXCSR_OFF) &= mxcsr_mask;
    *(uint32_t *)(area + MXCSR_MASK_OFF) = mxcsr_mask;
    if (use_xsave) {
        uint64_t old_bv = *(uint64_t *)(l->l_fpu + FXSAVE_SIZE);
        uint64_t bv = xstate ? *(uint64_t *)(area + FXSAVE_SIZE) & xcr0
                             : old_bv | XFEATURE_X87 | XFEATURE_SSE;
        memset(area + FXSAVE_SIZE, 0, XSAVE_HDR_SIZE);
        *(uint64_t *)(area + FXSAVE_SIZE) = bv;
    }
    memcpy(l->l_fpu, area, sizeof area);
}
