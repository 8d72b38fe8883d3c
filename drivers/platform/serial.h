/* 16550 UART on COM1, polled. */
#ifndef DRIVERS_SERIAL_H
#define DRIVERS_SERIAL_H
#include <kern/lib/types.h>
void serial_init(void);
void serial_putc(char c);
int serial_getc_nowait(void);
/* Interrupt (IRQ 4) on each received byte. */
void serial_enable_rx_interrupt(void);   /* -1 when no byte is waiting */
#endif
