/* VGA text-mode console (80x25 at 0xB8000) when the machine has one. */
#ifndef DRIVERS_VGA_H
#define DRIVERS_VGA_H
#include <kern/lib/types.h>
void vga_init(void);
void vga_putc(char c);
#endif
