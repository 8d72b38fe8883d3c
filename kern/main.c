#include <kern/kprintf.h>
#include <kern/arch.h>

void kmain(uint32_t magic, uint32_t info)
{
    console_init();
    kprintf("Tempest: magic %x info %x\n", magic, info);
    for (;;)
        halt();
}
