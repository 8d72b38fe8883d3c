; User-mode entry and exit: the SYSCALL entry point, the SYSRET fast
; return, and the first entry of a thread into user mode.  (The user-memory
; copy routines are kern/vm/usercopy.asm.)
;
; SYSCALL (set up by user_cpu_init in kern/proc/syscall.c: STAR, LSTAR,
; FMASK with IF, TF, DF and AC masked) arrives here with the user's rip in
; rcx, rflags in r11, the user stack still loaded and the user GS base.
; We swap to the kernel GS base, save the user rsp in the per-CPU scratch
; slot, load this thread's kernel stack top (struct cpu kstack_top, kept
; equal to TSS rsp0 by the context switch) and build a struct trapframe
; there exactly as an interrupt from user mode would (kern/arch/trap.h), so one
; frame layout serves fork, exec and the IRET return.  The system call
; runs with interrupts on.
;
; Offsets into struct cpu (checked by _Static_assert in syscall.c):
;   8 kstack_top, 16 user_rsp.

bits 64
section .text
extern syscall_dispatch
extern trap_return

%define CPU_KSTACK_TOP 8
%define CPU_USER_RSP   16
%define SEL_UCODE      0x23
%define SEL_UDATA      0x1b
%define VEC_SYSCALL    0x100        ; not a real vector: marks a syscall frame
%define USER_RIP_LIMIT 0x00007ffffffff000

global syscall_entry
syscall_entry:
    swapgs
    mov [gs:CPU_USER_RSP], rsp
    mov rsp, [gs:CPU_KSTACK_TOP]
    push SEL_UDATA                  ; ss
    push qword [gs:CPU_USER_RSP]    ; rsp
    push r11                        ; rflags
    push SEL_UCODE                  ; cs
    push rcx                        ; rip
    push 0                          ; error
    push VEC_SYSCALL                ; vector
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
    sti
    cld
    mov rdi, rsp
    push qword [rsp + 17*8]         ; frame-pointer link for backtraces
    push rbp
    mov rbp, rsp
    call syscall_dispatch
    add rsp, 16
    cli
    ; SYSRET only to a canonical user address and the user code segment;
    ; anything else (exec of a strange entry, a frame changed by the
    ; kernel) leaves through IRET, which checks everything.
    cmp qword [rsp + 15*8], VEC_SYSCALL
    jne .iret                       ; rt_sigreturn: every register back
    mov rcx, [rsp + 17*8]           ; rip
    mov r11, USER_RIP_LIMIT
    cmp rcx, r11
    jae .iret
    cmp qword [rsp + 18*8], SEL_UCODE
    jne .iret
    ; TF (a tracer's single step): SYSRET would trap at once, before the
    ; first user instruction; IRET traps after it.
    test qword [rsp + 19*8], 0x100
    jnz .iret
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
    add rsp, 16                     ; vector, error
    mov rcx, [rsp]                  ; user rip
    mov r11, [rsp + 16]             ; user rflags
    and r11, 0x3c0fd5               ; no IOPL, NT, RF, VM
    or r11, 0x202                   ; IF on, reserved bit 1
    mov rsp, [rsp + 24]             ; user rsp
    swapgs
    o64 sysret
.iret:
    jmp trap_return

; void user_enter(struct trapframe *tf): leave for user mode through the
; frame tf (anywhere on the kernel stack); never returns.
global user_enter
user_enter:
    cli
    mov rsp, rdi
    jmp trap_return

section .note.GNU-stack noalloc noexec nowrite progbits
