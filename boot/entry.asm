; Tempest boot entry: Multiboot2 header, 32-bit entry, the switch to long
; mode, and the jump to the higher-half kernel.
;
; GRUB enters _start in 32-bit protected mode with paging off, EAX holding
; the Multiboot2 magic and EBX the physical address of the boot information.
; We build the early page tables (2 MiB pages for the first 1 GiB, mapped
; three times: identity, direct map at 0xFFFF800000000000, and the kernel
; image at 0xFFFFFFFF80000000), enable PAE, long mode and paging, and call
; kmain(magic, info) on the boot stack in the higher half.  kern/vm/pmap.c
; later extends the direct map to all physical memory in these same tables,
; and the application-processor trampoline reuses them (CR3 is below 4 GiB).

%define KERNEL_VMA      0xFFFFFFFF80000000
%define MB2_MAGIC       0xE85250D6
%define MB2_ARCH_I386   0
%define BOOT_STACK_SIZE 16384

section .multiboot
align 8
mb2_header:
    dd MB2_MAGIC
    dd MB2_ARCH_I386
    dd mb2_header_end - mb2_header
    dd -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
    ; end tag
    align 8
    dw 0, 0
    dd 8
mb2_header_end:

section .boot.bss nobits
align 4096
global boot_pml4, boot_pdpt_low, boot_pdpt_high, boot_pd
boot_pml4:      resb 4096
boot_pdpt_low:  resb 4096
boot_pdpt_high: resb 4096
boot_pd:        resb 4096

section .boot.data
align 8
boot_gdt:
    dq 0
    dq 0x00AF9A000000FFFF       ; 0x08: 64-bit kernel code
    dq 0x00CF92000000FFFF       ; 0x10: kernel data
boot_gdt_end:
boot_gdt_ptr:
    dw boot_gdt_end - boot_gdt - 1
    dq boot_gdt
boot_magic: dd 0
boot_info:  dd 0

no_lm_msg: db "Tempest: this CPU has no long mode", 0

section .boot.text
bits 32
global _start
_start:
    cli
    cld
    mov [boot_magic], eax
    mov [boot_info], ebx

    ; Long mode is required; say so on COM1 rather than triple-fault.
    mov eax, 0x80000000
    cpuid
    cmp eax, 0x80000001
    jb .no_long_mode
    mov eax, 0x80000001
    cpuid
    test edx, 1 << 29
    jz .no_long_mode

    ; Zero the four table pages.
    mov edi, boot_pml4
    mov ecx, 4 * 4096 / 4
    xor eax, eax
    rep stosd

    ; PD: 512 entries of 2 MiB, present + writable + large.
    mov edi, boot_pd
    mov eax, 0x83
    mov ecx, 512
.fill_pd:
    mov [edi], eax
    mov dword [edi + 4], 0
    add eax, 0x200000
    add edi, 8
    loop .fill_pd

    ; PDPT_low[0] and PDPT_high[510] -> PD.
    mov eax, boot_pd
    or eax, 3
    mov [boot_pdpt_low], eax
    mov [boot_pdpt_high + 510 * 8], eax

    ; PML4[0] (identity), PML4[256] (direct map) -> PDPT_low;
    ; PML4[511] (kernel image) -> PDPT_high.
    mov eax, boot_pdpt_low
    or eax, 3
    mov [boot_pml4], eax
    mov [boot_pml4 + 256 * 8], eax
    mov eax, boot_pdpt_high
    or eax, 3
    mov [boot_pml4 + 511 * 8], eax

    mov eax, boot_pml4
    mov cr3, eax

    mov eax, cr4
    or eax, 1 << 5              ; PAE
    mov cr4, eax

    ; EFER: long mode, and no-execute when the CPU has it.
    mov eax, 0x80000001
    cpuid
    xor esi, esi
    test edx, 1 << 20
    jz .no_nx
    mov esi, 1 << 11            ; NXE
.no_nx:
    mov ecx, 0xC0000080
    rdmsr
    or eax, 1 << 8              ; LME
    or eax, esi
    wrmsr

    mov eax, cr0
    or eax, (1 << 31) | (1 << 16) | 1   ; PG, WP, PE
    mov cr0, eax

    lgdt [boot_gdt_ptr]
    jmp 0x08:.long_mode

.no_long_mode:
    mov esi, no_lm_msg
.putc:
    lodsb
    test al, al
    jz .halt
    mov dx, 0x3F8
    out dx, al
    jmp .putc
.halt:
    hlt
    jmp .halt

bits 64
.long_mode:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    xor ax, ax
    mov fs, ax
    mov gs, ax
    mov rax, higher_half
    jmp rax

section .text
bits 64
extern kmain
higher_half:
    mov rsp, boot_stack_top
    xor rbp, rbp
    mov edi, [rel boot_magic_hh]
    mov esi, [rel boot_info_hh]
    call kmain
.hang:
    cli
    hlt
    jmp .hang

; The boot-time copies of magic and info, read through the higher-half map.
boot_magic_hh equ boot_magic + KERNEL_VMA
boot_info_hh  equ boot_info + KERNEL_VMA

section .bss
align 16
global boot_stack_bottom, boot_stack_top
boot_stack_bottom:
    resb BOOT_STACK_SIZE
boot_stack_top:
section .note.GNU-stack noalloc noexec nowrite progbits
