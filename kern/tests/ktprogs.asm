; The user programs of the user-mode ktests (userland/ktprogs/, built by
; the Makefile with musl-gcc -static into build/ktprogs/), embedded in the
; kernel so a test can write them into the root file system and run them.

bits 64
section .rodata
align 16
global ktprog_start, ktprog_end
ktprog_start:
    incbin "build/ktprogs/ktprog"
ktprog_end:

section .note.GNU-stack noalloc noexec nowrite progbits
