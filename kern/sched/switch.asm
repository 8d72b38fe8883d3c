; Context switch between kernel threads.
;
;   void swtch(uint64_t *save_rsp, uint64_t new_rsp)
;
; Saves the callee-saved registers of the System V ABI on the current
; stack, stores the stack pointer through save_rsp, loads new_rsp and pops
; the other thread's registers.  Everything else (caller-saved registers,
; rflags) is saved by the C caller, kern/sched/sched.c.  A new thread's
; stack is laid out by thread_create so that the first swtch into it
; "returns" into thread_trampoline.

bits 64
section .text
global swtch
swtch:
    push rbp
    push rbx
    push r12
    push r13
    push r14
    push r15
    mov [rdi], rsp
    mov rsp, rsi
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
    pop rbp
    ret

; First code a new thread runs: r12 = function, r13 = argument.
extern thread_start
global thread_trampoline
thread_trampoline:
    mov rdi, r12
    mov rsi, r13
    xor rbp, rbp
    call thread_start
    ud2

section .note.GNU-stack noalloc noexec nowrite progbits
