/*
 * t_avx: the AVX registers belong to the program.  When the CPU has AVX,
 * the kernel must have enabled it (CR4.OSXSAVE, seen as CPUID's OSXSAVE
 * bit, and XCR0 with the SSE and AVX components), and all sixteen ymm
 * registers, upper halves included, keep their values
 *
 *   - across sched_yield while other processes with other values run on
 *     the same CPU,
 *   - across a move to another CPU (sched_setaffinity),
 *   - across a signal whose handler overwrites every ymm register;
 *
 * and the handler's frame carries them as Linux's does: uc_flags says
 * UC_FP_XSTATE, the fpstate area has FP_XSTATE_MAGIC1 in its software
 * bytes and FP_XSTATE_MAGIC2 after the area, the ymm upper halves sit at
 * CPUID leaf 0xD's offset for AVX, and a value the handler writes there
 * is what the program has after rt_sigreturn.
 *
 * The registers are loaded, the system call made and the registers stored
 * in one asm statement, so no compiled code can touch them in between.
 * On a CPU without AVX the program says so and checks only that the
 * kernel did not enable it.
 */
#include "ut.h"

#include <cpuid.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define NYMM 16
#define MAGIC1 0x46505853u
#define MAGIC2 0x46505845u

typedef struct { uint64_t q[4]; } ymm_t;

static int has_avx;
static unsigned avx_offset;     /* the AVX component's offset in the XSAVE area */

static uint64_t xgetbv0(void)
{
	uint32_t a, d;
	__asm__ volatile("xgetbv" : "=a"(a), "=d"(d) : "c"(0));
	return ((uint64_t)d << 32) | a;
}

static void fill(ymm_t *v, uint64_t seed)
{
	for (int i = 0; i < NYMM; i++)
		for (int j = 0; j < 4; j++)
			v[i].q[j] = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)(i * 4 + j) * 0x1000193;
}

/* Load the 16 ymm registers from in, make system call nr(a0, a1, a2),
 * store the registers to out: the call's result. */
static long ymm_syscall(const ymm_t *in, ymm_t *out, long nr, long a0, long a1, long a2)
{
	long ret;
	register long r10 __asm__("r10") = 0;
	__asm__ volatile(
		"vmovdqu 0(%[in]), %%ymm0\n\t"   "vmovdqu 32(%[in]), %%ymm1\n\t"
		"vmovdqu 64(%[in]), %%ymm2\n\t"  "vmovdqu 96(%[in]), %%ymm3\n\t"
		"vmovdqu 128(%[in]), %%ymm4\n\t" "vmovdqu 160(%[in]), %%ymm5\n\t"
		"vmovdqu 192(%[in]), %%ymm6\n\t" "vmovdqu 224(%[in]), %%ymm7\n\t"
		"vmovdqu 256(%[in]), %%ymm8\n\t" "vmovdqu 288(%[in]), %%ymm9\n\t"
		"vmovdqu 320(%[in]), %%ymm10\n\t" "vmovdqu 352(%[in]), %%ymm11\n\t"
		"vmovdqu 384(%[in]), %%ymm12\n\t" "vmovdqu 416(%[in]), %%ymm13\n\t"
		"vmovdqu 448(%[in]), %%ymm14\n\t" "vmovdqu 480(%[in]), %%ymm15\n\t"
		"syscall\n\t"
		"vmovdqu %%ymm0, 0(%[out])\n\t"   "vmovdqu %%ymm1, 32(%[out])\n\t"
		"vmovdqu %%ymm2, 64(%[out])\n\t"  "vmovdqu %%ymm3, 96(%[out])\n\t"
		"vmovdqu %%ymm4, 128(%[out])\n\t" "vmovdqu %%ymm5, 160(%[out])\n\t"
		"vmovdqu %%ymm6, 192(%[out])\n\t" "vmovdqu %%ymm7, 224(%[out])\n\t"
		"vmovdqu %%ymm8, 256(%[out])\n\t" "vmovdqu %%ymm9, 288(%[out])\n\t"
		"vmovdqu %%ymm10, 320(%[out])\n\t" "vmovdqu %%ymm11, 352(%[out])\n\t"
		"vmovdqu %%ymm12, 384(%[out])\n\t" "vmovdqu %%ymm13, 416(%[out])\n\t"
		"vmovdqu %%ymm14, 448(%[out])\n\t" "vmovdqu %%ymm15, 480(%[out])\n\t"
		"vzeroupper"
		: "=a"(ret), "+r"(r10)
		: "a"(nr), "D"(a0), "S"(a1), "d"(a2), [in] "r"(in), [out] "r"(out)
		: "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
		  "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
		  "xmm15");
	return ret;
}

static int same(const ymm_t *a, const ymm_t *b)
{
	return memcmp(a, b, NYMM * sizeof *a) == 0;
}

static void check_enabled(void)
{
	unsigned a, b, c, d;
	__cpuid(1, a, b, c, d);
	int cpu_avx = (c >> 28) & 1, osxsave = (c >> 27) & 1;
	if (!cpu_avx) {
		ut_note("this CPU has no AVX: only the kernel's restraint is checked");
		CHECK(!osxsave || !(xgetbv0() & 4));
		return;
	}
	CHECK(osxsave);
	if (!osxsave)
		return;
	uint64_t xcr0 = xgetbv0();
	ut_check((xcr0 & 7) == 7, __FILE__, __LINE__, "XCR0 enables x87, SSE and AVX (%#llx)",
		 (unsigned long long)xcr0);
	has_avx = (xcr0 & 7) == 7;
	__cpuid_count(0xd, 2, a, b, c, d);
	avx_offset = b;
	CHECK_EQ(a, 256u);
}

/* One process's round: values kept across yields with others running. */
static int yield_rounds(uint64_t seed, int rounds)
{
	ymm_t in[NYMM], out[NYMM];
	for (int r = 0; r < rounds; r++) {
		fill(in, seed + (uint64_t)r);
		ymm_syscall(in, out, SYS_sched_yield, 0, 0, 0);
		if (!same(in, out))
			return 1;
	}
	return 0;
}

static void check_yield(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t kids[4];
	for (int k = 0; k < 4; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(k % (ncpu > 0 ? ncpu : 1), &set);
			sched_setaffinity(0, sizeof set, &set);
			_exit(yield_rounds(1000 + (uint64_t)k * 77, 300));
		}
	}
	int bad = yield_rounds(5, 300);
	for (int k = 0; k < 4; k++) {
		int st = 0;
		waitpid(kids[k], &st, 0);
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	ut_check(!bad, __FILE__, __LINE__, "ymm0-15 kept across sched_yield in 5 processes");
}

static void check_migration(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 2) {
		ut_note("one CPU: no move to check");
		return;
	}
	cpu_set_t orig;
	CHECK_OK(sched_getaffinity(0, sizeof orig, &orig));
	int kept = 1;
	for (int r = 0; r < 20; r++) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(r % ncpu, &set);
		ymm_t in[NYMM], out[NYMM];
		fill(in, 300 + (uint64_t)r);
		long ret = ymm_syscall(in, out, SYS_sched_setaffinity, 0, sizeof set, (long)&set);
		kept &= ret == 0 && same(in, out) && sched_getcpu() == r % ncpu;
	}
	ut_check(kept, __FILE__, __LINE__, "ymm0-15 kept across moves between %ld CPUs", ncpu);
	sched_setaffinity(0, sizeof orig, &orig);
}

/* ---- signals ---- */

static volatile int frame_ok, magic_ok, upper_seen;
static volatile uint64_t seen_upper5;
static const uint64_t planted = 0x0123456789abcdefULL;

static void clobber_all(void)
{
	__asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\t"
			 "vmovdqa %%ymm0, %%ymm1\n\t" "vmovdqa %%ymm0, %%ymm2\n\t"
			 "vmovdqa %%ymm0, %%ymm3\n\t" "vmovdqa %%ymm0, %%ymm4\n\t"
			 "vmovdqa %%ymm0, %%ymm5\n\t" "vmovdqa %%ymm0, %%ymm6\n\t"
			 "vmovdqa %%ymm0, %%ymm7\n\t" "vmovdqa %%ymm0, %%ymm8\n\t"
			 "vmovdqa %%ymm0, %%ymm9\n\t" "vmovdqa %%ymm0, %%ymm10\n\t"
			 "vmovdqa %%ymm0, %%ymm11\n\t" "vmovdqa %%ymm0, %%ymm12\n\t"
			 "vmovdqa %%ymm0, %%ymm13\n\t" "vmovdqa %%ymm0, %%ymm14\n\t"
			 "vmovdqa %%ymm0, %%ymm15\n\t"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			     "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

static int rewrite;     /* the handler plants a value in ymm6's saved upper half */

static void handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned char *fp = (unsigned char *)uc->uc_mcontext.fpregs;
	frame_ok = fp && ((uintptr_t)fp & 63) == 0 && (uc->uc_flags & 1);
	if (fp) {
		uint32_t m1, size;
		memcpy(&m1, fp + 464, 4);
		memcpy(&size, fp + 464 + 16, 4);
		uint32_t m2 = 0;
		if (m1 == MAGIC1 && size >= 576 && size < 65536)
			memcpy(&m2, fp + size, 4);
		magic_ok = m1 == MAGIC1 && m2 == MAGIC2;
		uint64_t bv;
		memcpy(&bv, fp + 512, 8);
		upper_seen = (bv & 4) != 0;
		uint64_t u5;
		memcpy(&u5, fp + avx_offset + 5 * 16, 8);   /* ymm5 bits 128..191 */
		seen_upper5 = u5;
		if (rewrite && magic_ok)
			memcpy(fp + avx_offset + 6 * 16, &planted, 8);
	}
	clobber_all();
}

static void check_signal(void)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	CHECK_OK(sigaction(SIGUSR1, &sa, NULL));
	ymm_t in[NYMM], out[NYMM];
	fill(in, 42);
	long r = ymm_syscall(in, out, SYS_kill, getpid(), SIGUSR1, 0);
	CHECK_EQ(r, 0);
	ut_check(same(in, out), __FILE__, __LINE__,
		 "ymm0-15 kept across a handler that overwrote them all");
	ut_check(frame_ok, __FILE__, __LINE__,
		 "the frame's fpstate is 64-byte aligned and uc_flags has UC_FP_XSTATE");
	ut_check(magic_ok, __FILE__, __LINE__, "the frame has FP_XSTATE_MAGIC1 and MAGIC2");
	CHECK(upper_seen);
	ut_check(seen_upper5 == in[5].q[2], __FILE__, __LINE__,
		 "ymm5's upper half in the frame (%#llx, want %#llx)",
		 (unsigned long long)seen_upper5, (unsigned long long)in[5].q[2]);
	rewrite = 1;
	fill(in, 43);
	ymm_syscall(in, out, SYS_kill, getpid(), SIGUSR1, 0);
	ut_check(out[6].q[2] == planted && out[6].q[0] == in[6].q[0], __FILE__, __LINE__,
		 "a value the handler wrote to the frame's ymm6 is there after sigreturn");
	rewrite = 0;
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	check_enabled();
	if (has_avx) {
		check_yield();
		check_migration();
		check_signal();
	}
	return ut_done();
}
