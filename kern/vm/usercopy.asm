; The user-memory copy routines behind copyin, copyout and copyinstr
; (kern/vm/copy.c, which holds the theory): the only instructions that
; touch user memory.  A page fault between user_copy_start and
; user_copy_end is resolved by copy_fault_fixup, or sent to
; user_copy_fault, which returns -EFAULT.  With SMAP on, the window is
; opened (stac) for the copy alone.

bits 64
section .text
extern smap_enabled

; int user_copy(void *dst, const void *src, size_t n): 0, or -EFAULT when
; a fault between user_copy_start and user_copy_end could not be resolved
; (the fault handler moves rip to user_copy_fault).  The caller has
; checked that the user side of the copy lies below the user limit.
global user_copy, user_copy_start, user_copy_end, user_copy_fault
; Eight bytes per iteration, then the last n % 8 (kern/lib/string.c says
; why not rep movsb); a fault in either resumes where it stopped.
user_copy:
    mov rcx, rdx
    shr rcx, 3
    and edx, 7
    cmp byte [rel smap_enabled], 0
    je .nostac
    stac
.nostac:
user_copy_start:
    rep movsq
    mov ecx, edx
    rep movsb
    xor eax, eax
    jmp user_copy_done

; long user_strncpy(char *dst, const char *src, size_t max): copies up to
; max bytes including the NUL; returns the length without the NUL, max
; when no NUL was found in max bytes, or -EFAULT.
global user_strncpy
user_strncpy:
    cmp byte [rel smap_enabled], 0
    je .nostac2
    stac
.nostac2:
    xor eax, eax
.loop:
    cmp rax, rdx
    jae user_copy_done
    mov cl, [rsi + rax]
    mov [rdi + rax], cl
    test cl, cl
    jz user_copy_done
    inc rax
    jmp .loop
user_copy_end:

user_copy_fault:
    mov rax, -14
user_copy_done:
    cmp byte [rel smap_enabled], 0
    je .noclac
    clac
.noclac:
    ret

section .note.GNU-stack noalloc noexec nowrite progbits
