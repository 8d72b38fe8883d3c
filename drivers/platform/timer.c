/*
 * Reference clocks and the TSC.
 *
 * The HPET main counter (when ACPI lists one) or else PIT channel 2 is the
 * reference against which the TSC and the LAPIC timer are calibrated at
 * boot.  Under QEMU's icount mode all of these advance with the virtual
 * instruction count, so calibrations and delays stay consistent.  State is
 * written once on the boot CPU before others start; read-only afterwards.
 */
#include <drivers/platform/timer.h>
#include <kern/arch/arch.h>
#include <kern/lib/kprintf.h>

#define HPET_CAP    0x000
#define HPET_CONFIG 0x010
#define HPET_COUNT  0x0F0

static volatile uint64_t *hpet;     /* [boot] NULL: use the PIT */
static uint64_t hpet_fs_per_tick;   /* [boot] */
uint64_t tsc_hz;                    /* [boot] */
static uint64_t tsc_boot;           /* [boot] */

static uint64_t hpet_read(uint32_t reg) { return hpet[reg / 8]; }
static void hpet_write(uint32_t reg, uint64_t v) { hpet[reg / 8] = v; }

static bool hpet_start(paddr_t phys)
{
    if (!phys)
        return false;
    hpet = phys_to_virt(phys);
    uint64_t cap = hpet_read(HPET_CAP);
    hpet_fs_per_tick = cap >> 32;
    if (hpet_fs_per_tick == 0 || hpet_fs_per_tick > 100000000) {
        kprintf("timer: HPET at %lx has a bad period %lu fs, using the PIT\n", phys, hpet_fs_per_tick);
        hpet = NULL;
        return false;
    }
    hpet_write(HPET_CONFIG, hpet_read(HPET_CONFIG) | 1);   /* enable counter */
    return true;
}

static void hpet_spin_us(uint64_t us)
{
    uint64_t ticks = us * 1000000000ULL / hpet_fs_per_tick;
    uint64_t start = hpet_read(HPET_COUNT);
    while (hpet_read(HPET_COUNT) - start < ticks)
        cpu_relax();
}

/* PIT channel 2, gated through port 0x61, one-shot count down. */
static void pit_spin_us(uint64_t us)
{
    while (us > 0) {
        uint64_t chunk = us > 50000 ? 50000 : us;
        uint32_t count = (uint32_t)(chunk * 1193182ULL / 1000000ULL);
        if (count == 0)
            count = 1;
        outb(0x61, (inb(0x61) & ~0x02) | 0x01);    /* gate on, speaker off */
        outb(0x43, 0xB0);                          /* ch2, lo/hi, mode 0 */
        outb(0x42, count & 0xFF);
        outb(0x42, count >> 8);
        while (!(inb(0x61) & 0x20))
            cpu_relax();
        us -= chunk;
    }
}

void clock_spin_us(uint64_t us)
{
    if (hpet)
        hpet_spin_us(us);
    else
        pit_spin_us(us);
}

const char *clock_source(void)
{
    return hpet ? "hpet" : "pit";
}

/*
 * Read the HPET and the TSC at (nearly) the same instant: a TSC reading
 * bracketed by two HPET readings that are close together.  Under an
 * emulator the virtual CPU can be descheduled between any two
 * instructions; a wide bracket means that happened, so try again.
 */
static void hpet_tsc_pair(uint64_t *h, uint64_t *t)
{
    uint64_t best_gap = ~0UL;
    for (int i = 0; i < 8; i++) {
        uint64_t h1 = hpet_read(HPET_COUNT);
        uint64_t tsc = rdtsc();
        uint64_t h2 = hpet_read(HPET_COUNT);
        if (h2 - h1 < best_gap) {
            best_gap = h2 - h1;
            *h = h1 + (h2 - h1) / 2;
            *t = tsc;
        }
        if (best_gap * hpet_fs_per_tick < 20000000000ULL)     /* 20 us */
            break;
    }
}

static uint64_t calibrate_tsc_hpet(void)
{
    uint64_t h0, t0, h1, t1;
    hpet_tsc_pair(&h0, &t0);
    hpet_spin_us(50000);
    hpet_tsc_pair(&h1, &t1);
    uint64_t fs = (h1 - h0) * hpet_fs_per_tick;     /* femtoseconds */
    return fs ? (t1 - t0) * 1000000000ULL / (fs / 1000000) : 0;
}

static uint64_t calibrate_tsc_pit(void)
{
    uint64_t t0 = rdtsc();
    pit_spin_us(20000);
    return (rdtsc() - t0) * 50;
}

void clock_init(paddr_t hpet_phys)
{
    hpet_start(hpet_phys);
    tsc_boot = rdtsc();
    tsc_hz = hpet ? calibrate_tsc_hpet() : calibrate_tsc_pit();
    if (tsc_hz == 0)
        tsc_hz = 1000000000;
    kprintf("timer: reference %s, tsc %lu MHz\n", clock_source(), tsc_hz / 1000000);
}

uint64_t tsc_to_ns(uint64_t cycles)
{
    return cycles / tsc_hz * 1000000000ULL + cycles % tsc_hz * 1000000000ULL / tsc_hz;
}

void delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + us * tsc_hz / 1000000;
    while ((int64_t)(rdtsc() - end) < 0)
        cpu_relax();
}

uint64_t uptime_ns(void)
{
    return tsc_to_ns(rdtsc() - tsc_boot);
}
