/*
 * COM1 console: a 16550 UART at I/O port 0x3F8, 115200 baud 8N1.  Output
 * is polled; input interrupts once drivers/tty/tty.c enables it.
 * Callers serialize through the console lock in kern/arch/console.c.
 */
#include <drivers/platform/serial.h>
#include <kern/arch/arch.h>

#define COM1 0x3F8
#define LSR_THR_EMPTY 0x20
#define LSR_DATA_READY 0x01

static bool serial_present;

void serial_init(void)
{
    outb(COM1 + 1, 0x00);       /* no interrupts */
    outb(COM1 + 3, 0x80);       /* DLAB */
    outb(COM1 + 0, 0x01);       /* divisor 1: 115200 */
    outb(COM1 + 1, 0x00);
    outb(COM1 + 3, 0x03);       /* 8N1 */
    outb(COM1 + 2, 0xC7);       /* FIFO on, cleared */
    outb(COM1 + 4, 0x03);       /* DTR, RTS */
    /* A missing UART reads back 0xFF from every register. */
    serial_present = inb(COM1 + 5) != 0xFF;
}

void serial_putc(char c)
{
    if (!serial_present)
        return;
    for (int spins = 0; spins < 100000 && !(inb(COM1 + 5) & LSR_THR_EMPTY); spins++)
        cpu_relax();
    outb(COM1, (uint8_t)c);
}

void serial_enable_rx_interrupt(void)
{
    if (!serial_present)
        return;
    outb(COM1 + 4, 0x0B);       /* DTR, RTS, OUT2: OUT2 gates the IRQ line */
    outb(COM1 + 1, 0x01);       /* interrupt when data is received */
    while (serial_getc_nowait() >= 0)
        ;                       /* drop what came before */
}

int serial_getc_nowait(void)
{
    if (!serial_present || !(inb(COM1 + 5) & LSR_DATA_READY))
        return -1;
    return inb(COM1);
}
