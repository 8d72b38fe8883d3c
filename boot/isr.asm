; Trap and interrupt entry stubs.  Every vector gets a stub that pushes a
; dummy error code when the CPU does not push one, then the vector number,
; then jumps to the common path, which saves the general registers in the
; order of struct trapframe (kern/arch/trap.h) and calls trap(frame).
; trap_vectors[] holds the stub addresses for the IDT builder in kern/arch/cpu.c.

bits 64
section .text
extern trap

%macro STUB 1
align 16
vector_%1:
%if %1 == 8 || (%1 >= 10 && %1 <= 14) || %1 == 17 || %1 == 21 || %1 == 29 || %1 == 30
%else
    push 0
%endif
    push %1
    jmp trap_common
%endmacro

%assign i 0
%rep 256
    STUB i
%assign i i+1
%endrep

trap_common:
    push rax
    push rbx
    push rcx
    push rdx
    push rsi
    push rdi
    push rbp
    push r8
    push r9
    push r10
    push r11
    push r12
    push r13
    push r14
    push r15
    ; Coming from user mode (CPL 3 in the saved CS), switch GS to the
    ; kernel's per-CPU base.
    test qword [rsp + 18*8], 3
    jz .kernel1
    swapgs
.kernel1:
    cld
    mov rdi, rsp
    ; A frame-pointer link so backtraces walk from trap() into the
    ; interrupted code: rbp = &saved rbp slot layout [rbp][rip].
    push qword [rsp + 17*8]     ; interrupted rip
    push rbp
    mov rbp, rsp
    call trap
    add rsp, 16
global trap_return
trap_return:
    test qword [rsp + 18*8], 3
    jz .kernel2
    swapgs
.kernel2:
    pop r15
    pop r14
    pop r13
    pop r12
    pop r11
    pop r10
    pop r9
    pop r8
    pop rbp
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rbx
    pop rax
    add rsp, 16                 ; vector and error code
    iretq

section .rodata
align 8
global trap_vectors
trap_vectors:
%assign i 0
%rep 256
    dq vector_%+i
%assign i i+1
%endrep

section .note.GNU-stack noalloc noexec nowrite progbits
