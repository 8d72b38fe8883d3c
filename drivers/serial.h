/* 16550 UART on COM1, polled. */
#ifndef DRIVERS_SERIAL_H
#define DRIVERS_SERIAL_H
#include <kern/types.h>
void serial_init(void);
void serial_putc(char c);
int serial_getc_nowait(void);   /* -1 when no byte is waiting */
#endif
