/*
 * VGA text console.  GRUB leaves the adapter in 80x25 text mode when the
 * machine has one (we ask for no framebuffer in the Multiboot2 header).
 * We detect it by the CRT controller answering at 0x3D4 and write cells
 * through the direct map.  Callers serialize through the console lock.
 */
#include <drivers/platform/vga.h>
#include <kern/arch/arch.h>
#include <kern/lib/string.h>

#define COLS 80
#define ROWS 25
#define ATTR 0x07

static volatile uint16_t *cells;
static int row, col;

void vga_init(void)
{
    /* Write and read back the cursor-location-low register. */
    outb(0x3D4, 0x0F);
    uint8_t old = inb(0x3D5);
    outb(0x3D5, 0x5A);
    bool present = inb(0x3D5) == 0x5A;
    outb(0x3D5, old);
    if (!present)
        return;
    cells = phys_to_virt(0xB8000);
    for (int i = 0; i < COLS * ROWS; i++)
        cells[i] = ATTR << 8 | ' ';
    row = col = 0;
}

static void scroll(void)
{
    for (int i = 0; i < COLS * (ROWS - 1); i++)
        cells[i] = cells[i + COLS];
    for (int i = COLS * (ROWS - 1); i < COLS * ROWS; i++)
        cells[i] = ATTR << 8 | ' ';
    row = ROWS - 1;
}

void vga_putc(char c)
{
    if (!cells)
        return;
    if (c == '\n') {
        col = 0;
        if (++row == ROWS)
            scroll();
        return;
    }
    if (c == '\r') {
        col = 0;
        return;
    }
    cells[row * COLS + col] = ATTR << 8 | (uint8_t)c;
    if (++col == COLS) {
        col = 0;
        if (++row == ROWS)
            scroll();
    }
}
