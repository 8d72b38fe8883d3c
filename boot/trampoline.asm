; Application-processor trampoline.
;
; The boot CPU copies this blob to physical TRAMP_BASE (a page below 1 MiB)
; and starts each AP there with INIT-SIPI-SIPI (vector TRAMP_BASE >> 12).
; The AP walks from real mode through protected mode into long mode using
; the kernel's own page tables (CR3 below 4 GiB, low memory identity
; mapped), then calls entry(arg) on its own stack.  The last four quadwords
; are filled in by kern/arch/smp.c before each start: cr3, stack, entry, arg.

%define TRAMP_BASE 0x8000
%define REL(x) (TRAMP_BASE + (x) - tramp_start)

section .trampoline progbits alloc noexec nowrite align=16
bits 16
global tramp_start, tramp_end
tramp_start:
    cli
    cld
    xor ax, ax
    mov ds, ax
    mov es, ax
    mov ss, ax
    lgdt [REL(tramp_gdt_ptr)]
    mov eax, cr0
    or eax, 1
    mov cr0, eax
    jmp dword 0x08:REL(tramp32)

bits 32
tramp32:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov eax, cr4
    or eax, 1 << 5                      ; PAE
    mov cr4, eax
    mov eax, [REL(tramp_cr3)]
    mov cr3, eax
    mov ecx, 0xC0000080                 ; EFER
    rdmsr
    or eax, [REL(tramp_efer)]           ; LME, and NXE when the BSP uses it
    wrmsr
    mov eax, cr0
    or eax, (1 << 31) | (1 << 16) | 1   ; PG, WP, PE
    mov cr0, eax
    jmp 0x18:REL(tramp64)

bits 64
tramp64:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov rsp, [REL(tramp_stack)]
    mov rdi, [REL(tramp_arg)]
    mov rax, [REL(tramp_entry)]
    xor rbp, rbp
    call rax
.hang:
    cli
    hlt
    jmp .hang

align 8
tramp_gdt:
    dq 0
    dq 0x00CF9A000000FFFF               ; 0x08: 32-bit code
    dq 0x00CF92000000FFFF               ; 0x10: data
    dq 0x00AF9A000000FFFF               ; 0x18: 64-bit code
tramp_gdt_ptr:
    dw tramp_gdt_ptr - tramp_gdt - 1
    dd REL(tramp_gdt)
align 8
tramp_efer:  dq 0
tramp_cr3:   dq 0
tramp_stack: dq 0
tramp_entry: dq 0
tramp_arg:   dq 0
tramp_end:

section .note.GNU-stack noalloc noexec nowrite progbits
