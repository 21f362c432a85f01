/* The trampoline table: code that never changes, mapped read+execute from this package's own binary as
   often as slots are needed, each mapping followed by read+write data words (Trampolines.c).
   So no page is ever writable and executable, and nothing is written and then made executable.

   The table is CFFI_TABLE_SIZE bytes of CFFI_SLOT_SIZE-byte slots. Slot i's data words, CFFI_WORDS_SIZE
   bytes (word 0 its context, word 1 its entry), sit at i * CFFI_WORDS_SIZE in the data CFFI_TABLE_SIZE
   bytes after the table: half a slot's stride, since x86_64's slot takes 17 bytes of code and its data
   only two words, each slot loading from its own displacement. A slot loads its context into a
   register and jumps to its entry, touching no stack and no other register but a scratch one (x16), so
   the entry receives the caller's arguments in place and returns straight to the caller, its result in
   the register the caller reads (an entry of the result's form, see Trampolines.h). Its two parts, by
   what they do with the context (CFFI_TRAMPOLINE_*):
   - REGISTERS: into the sixth integer argument register (r9; x5), which a register-only signature leaves
     free, for the register path's entries;
   - STATIC_CHAIN: into the static-chain register (r10; x18), where libffi's Go closures take their
     closure, for libffi's path.

   64 KiB: the largest page size aarch64 Linux runs with, so that one mapping of it is whole pages on
   every kernel. */
#include "TrampolineTable.h"

/* The table is CFFI_TABLE_SIZE bytes, which Trampolines.c maps (comparing its first mapping with the
   table) and finds each slot's words after: its two parts' slots fill it exactly, each slot
   CFFI_SLOT_SIZE bytes (`slots`), and the .org after them stops the build if anything more lands in it. */
        .if (CFFI_REGISTER_SLOTS + CFFI_CHAIN_SLOTS) * CFFI_SLOT_SIZE != CFFI_TABLE_SIZE
        .error "the trampoline table's slots do not fill CFFI_TABLE_SIZE bytes"
        .endif

/* A .note.gnu.property of one feature word, `features` under property `type`: what a linker ANDs over
   every object of a program to decide whether the program is marked (CET on x86_64, BTI and PAC on
   aarch64). Emitted by each CPU's part below where the build asks for the feature. */
        .macro feature_note type, features
        .pushsection .note.gnu.property, "a"
        .balign 8
        .long 4              /* the name's size */
        .long 16             /* the descriptor's size: one property of a 4-byte word, padded to 8 */
        .long 5              /* NT_GNU_PROPERTY_TYPE_0 */
        .asciz "GNU"
        .long \type
        .long 4
        .long \features
        .long 0
        .popsection
        .endm

#if defined(__x86_64__) && defined(__linux__)

        .section .text.delegatekit_trampolines, "ax", @progbits
        .balign CFFI_TABLE_SIZE
        .globl cffi_trampoline_table
        .hidden cffi_trampoline_table
        .type cffi_trampoline_table, @object
cffi_trampoline_table:
        /* `count` slots loading the context into `register`, each CFFI_SLOT_SIZE bytes exactly: the .org
           pads the slot, and stops the build if its instructions outgrow it. Slot `index`'s words lie
           index * (CFFI_SLOT_SIZE - CFFI_WORDS_SIZE) bytes nearer than CFFI_TABLE_SIZE; each
           instruction's rip-relative displacement counts from its end: the context load ends 11 bytes
           into the slot, the jump 17. */
        .macro slots count, register
        .rept \count
0:
        endbr64
        movq CFFI_TABLE_SIZE - .Lslot_index * (CFFI_SLOT_SIZE - CFFI_WORDS_SIZE) - 11(%rip), \register
        jmpq *CFFI_TABLE_SIZE - .Lslot_index * (CFFI_SLOT_SIZE - CFFI_WORDS_SIZE) + 8 - 17(%rip)
        .org 0b + CFFI_SLOT_SIZE, 0xcc
        .set .Lslot_index, .Lslot_index + 1
        .endr
        .endm
        .set .Lslot_index, 0
        slots CFFI_REGISTER_SLOTS, %r9          /* REGISTERS */
        slots CFFI_CHAIN_SLOTS, %r10            /* STATIC_CHAIN */
        .org cffi_trampoline_table + CFFI_TABLE_SIZE
        .size cffi_trampoline_table, CFFI_TABLE_SIZE

        /* Where a dead slot's entry points: the context is the message to stop with. */
        .text
        .globl cffi_trampoline_dead_registers
        .hidden cffi_trampoline_dead_registers
        .type cffi_trampoline_dead_registers, @function
cffi_trampoline_dead_registers:
        endbr64
        movq %r9, %rdi
        jmp cffi_trampoline_stop
        .size cffi_trampoline_dead_registers, . - cffi_trampoline_dead_registers

        .globl cffi_trampoline_dead_chain
        .hidden cffi_trampoline_dead_chain
        .type cffi_trampoline_dead_chain, @function
cffi_trampoline_dead_chain:
        endbr64
        movq %r10, %rdi
        jmp cffi_trampoline_stop
        .size cffi_trampoline_dead_chain, . - cffi_trampoline_dead_chain

        /* Where a freed slot's entry points, of either kind: its context word holds the next free slot. */
        .globl cffi_trampoline_freed
        .hidden cffi_trampoline_freed
        .type cffi_trampoline_freed, @function
cffi_trampoline_freed:
        endbr64
        leaq cffi_trampoline_freed_message(%rip), %rdi
        jmp cffi_trampoline_stop
        .size cffi_trampoline_freed, . - cffi_trampoline_freed

        /* cffi_enter_register_body (Trampolines.h) on x86_64: the caller's r13 kept on the stack (which
           also aligns it for the call), the body's context in r13, its function called with every
           argument register in place; its result registers are the entry's. Also cffi_call_register_body
           (Trampolines.h): rax and xmm0 are a cffi_registers. */
        .globl cffi_enter_register_body
        .hidden cffi_enter_register_body
        .type cffi_enter_register_body, @function
        .globl cffi_call_register_body
        .hidden cffi_call_register_body
        .type cffi_call_register_body, @function
        .p2align 4
cffi_enter_register_body:
cffi_call_register_body:
        .cfi_startproc
        endbr64
        pushq %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r13, 0
        movq 8(%r9), %r13
        callq *(%r9)
        popq %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r13
        retq
        .cfi_endproc
        .size cffi_enter_register_body, . - cffi_enter_register_body
        .size cffi_call_register_body, . - cffi_call_register_body

        /* cffi_call_opaque (Trampolines.h) on x86_64: the call record in r9, where a register entry takes
           its context. The registers go to a block on the stack (i0..i4 at 0, d0..d7 at 40, the result
           word at 104, zeroed); each argument register of Swift's convention gets the address of its
           argument's register in the block or, for a pack, rdi gets an array of those addresses (at 112);
           rax the result word's address, r13 the function's context; rbx keeps the record across the
           call. The result word comes back in rax, sign-extended by the record's shift, and in xmm0. */
        .globl cffi_call_opaque
        .hidden cffi_call_opaque
        .type cffi_call_opaque, @function
        .p2align 4
cffi_call_opaque:
        .cfi_startproc
        endbr64
        pushq %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r13, 0
        pushq %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbx, 0
        subq $232, %rsp                 /* the block, the result word, the pack (14 entries), 16-byte alignment */
        .cfi_adjust_cfa_offset 232
        movq %rdi, 0(%rsp)
        movq %rsi, 8(%rsp)
        movq %rdx, 16(%rsp)
        movq %rcx, 24(%rsp)
        movq %r8, 32(%rsp)
        movsd %xmm0, 40(%rsp)
        movsd %xmm1, 48(%rsp)
        movsd %xmm2, 56(%rsp)
        movsd %xmm3, 64(%rsp)
        movsd %xmm4, 72(%rsp)
        movsd %xmm5, 80(%rsp)
        movsd %xmm6, 88(%rsp)
        movsd %xmm7, 96(%rsp)
        movq $0, 104(%rsp)
        movq %r9, %rbx
        movq 8(%rbx), %r13              /* context */
        leaq 104(%rsp), %rax            /* the result's address */
        cmpq $0, 24(%rbx)               /* pack */
        jne 1f
        movq 32(%rbx), %rdi             /* each argument's address */
        addq %rsp, %rdi
        movq 40(%rbx), %rsi
        addq %rsp, %rsi
        movq 48(%rbx), %rdx
        addq %rsp, %rdx
        movq 56(%rbx), %rcx
        addq %rsp, %rcx
        movq 64(%rbx), %r8
        addq %rsp, %r8
        movq 72(%rbx), %r9
        addq %rsp, %r9
        jmp 2f
1:      leaq 112(%rsp), %rdi            /* the pack: each argument's address, in an array */
        movq %rsp, %xmm8                /* two at a time: the block's address in both halves, */
        punpcklqdq %xmm8, %xmm8         /* added to two offsets (an odd count's last pair reads */
        xorl %ecx, %ecx                 /* the record's spare offset and fills a spare entry) */
3:      movdqu 32(%rbx,%rcx,8), %xmm9
        paddq %xmm8, %xmm9
        movdqu %xmm9, (%rdi,%rcx,8)
        addq $2, %rcx
        cmpq 24(%rbx), %rcx
        jb 3b
2:      callq *(%rbx)
        movq 16(%rbx), %rcx             /* result_shift */
        movq 104(%rsp), %rax
        shlq %cl, %rax
        sarq %cl, %rax
        movq 104(%rsp), %xmm0
        addq $232, %rsp
        .cfi_adjust_cfa_offset -232
        popq %rbx
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbx
        popq %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r13
        retq
        .cfi_endproc
        .size cffi_call_opaque, . - cffi_call_opaque

        /* cffi_call_pack (Trampolines.h) on x86_64: the pack (the argument array) in rdi, the result's
           address in rax, the function's context in r13 (the caller's kept on the stack, which also
           aligns it for the call). */
        .globl cffi_call_pack
        .hidden cffi_call_pack
        .type cffi_call_pack, @function
        .p2align 4
cffi_call_pack:
        .cfi_startproc
        endbr64
        pushq %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r13, 0
        movq (%rdi), %r11
        movq 8(%rdi), %r13
        movq %rdx, %rax
        movq %rsi, %rdi
        callq *%r11
        popq %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r13
        retq
        .cfi_endproc
        .size cffi_call_pack, . - cffi_call_pack

        /* cffi_call_spread (Trampolines.h) on x86_64: the function value's words in rdi, the argument
           array in rsi, the count (7 or 8) in rdx, the result's address in rcx. The addresses past the
           sixth go in the two stack words under the return address (the second a pad for seven), so the
           stack is 16-aligned at the call. */
        .globl cffi_call_spread
        .hidden cffi_call_spread
        .type cffi_call_spread, @function
        .p2align 4
cffi_call_spread:
        .cfi_startproc
        endbr64
        pushq %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r13, 0
        subq $16, %rsp
        .cfi_adjust_cfa_offset 16
        movq (%rdi), %r11
        movq 8(%rdi), %r13
        movq %rcx, %rax
        movq 48(%rsi), %r10
        movq %r10, 0(%rsp)
        cmpq $8, %rdx
        jb 1f
        movq 56(%rsi), %r10
        movq %r10, 8(%rsp)
1:      movq 0(%rsi), %rdi
        movq 16(%rsi), %rdx
        movq 24(%rsi), %rcx
        movq 32(%rsi), %r8
        movq 40(%rsi), %r9
        movq 8(%rsi), %rsi
        callq *%r11
        addq $16, %rsp
        .cfi_adjust_cfa_offset -16
        popq %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r13
        retq
        .cfi_endproc
        .size cffi_call_spread, . - cffi_call_spread

        /* cffi_call_block (Trampolines.h) on x86_64: the function in rdi, the block in rsi, the stack words
           in rdx and their count in rcx. rbx keeps the block and r12 the function across the copy and the
           call; the stack words go right under the return address, the stack 16-aligned at the call. */
        .globl cffi_call_block
        .hidden cffi_call_block
        .type cffi_call_block, @function
        .p2align 4
cffi_call_block:
        .cfi_startproc
        endbr64
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        movq %rsp, %rbp
        .cfi_def_cfa_register %rbp
        pushq %rbx
        .cfi_offset %rbx, -24
        pushq %r12
        .cfi_offset %r12, -32
        movq %rsi, %rbx
        movq %rdi, %r12
        leaq 15(,%rcx,8), %rax
        andq $-16, %rax
        subq %rax, %rsp
        xorl %eax, %eax
1:      cmpq %rcx, %rax
        jae 2f
        movq (%rdx,%rax,8), %r10
        movq %r10, (%rsp,%rax,8)
        incq %rax
        jmp 1b
2:      movq 0(%rbx), %rdi
        movq 8(%rbx), %rsi
        movq 16(%rbx), %rdx
        movq 24(%rbx), %rcx
        movq 32(%rbx), %r8
        movq 40(%rbx), %r9
        movsd 48(%rbx), %xmm0
        movsd 56(%rbx), %xmm1
        movsd 64(%rbx), %xmm2
        movsd 72(%rbx), %xmm3
        movsd 80(%rbx), %xmm4
        movsd 88(%rbx), %xmm5
        movsd 96(%rbx), %xmm6
        movsd 104(%rbx), %xmm7
        movl 112(%rbx), %eax            /* the vector registers a variadic callee saves */
        callq *%r12
        movq %rax, 0(%rbx)
        movq %rdx, 8(%rbx)
        movsd %xmm0, 48(%rbx)
        movsd %xmm1, 56(%rbx)
        cmpq $0, 120(%rbx)              /* a `long double` result, on the x87 stack */
        je 3f
        fstpt 112(%rbx)
3:      leaq -16(%rbp), %rsp
        popq %r12
        .cfi_restore %r12
        popq %rbx
        .cfi_restore %rbx
        popq %rbp
        .cfi_def_cfa %rsp, 8
        .cfi_restore %rbp
        retq
        .cfi_endproc
        .size cffi_call_block, . - cffi_call_block

        /* cffi_enter_array and cffi_enter_array_composite (Trampolines.h) on x86_64: the
           cffi_array_entry in r10, where a STATIC_CHAIN slot puts its context. A frame of the entry's
           `frame` bytes under the saved rbp: rdi..r9 at 0, xmm0..xmm7 at 48, the result words at 112
           (zeroed), the result's kind at 128 (composite), libffi's argument array at 136, made from `places`; the
           caller's stack words start at frame + 16. A scalar result comes back in rax and xmm0; a struct
           as the entry's `result` says, one in memory at the address the caller passed in rdi, a `long double` in
           st(0). */
        .macro array_entry name, composite
        .globl \name
        .hidden \name
        .type \name, @function
        .p2align 4
\name:
        .cfi_startproc
        endbr64
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        movq %rsp, %rbp
        .cfi_def_cfa_register %rbp
        movl 24(%r10), %eax             /* frame */
        subq %rax, %rsp
        movq %rdi, 0(%rsp)
        movq %rsi, 8(%rsp)
        movq %rdx, 16(%rsp)
        movq %rcx, 24(%rsp)
        movq %r8, 32(%rsp)
        movq %r9, 40(%rsp)
        movsd %xmm0, 48(%rsp)
        movsd %xmm1, 56(%rsp)
        movsd %xmm2, 64(%rsp)
        movsd %xmm3, 72(%rsp)
        movsd %xmm4, 80(%rsp)
        movsd %xmm5, 88(%rsp)
        movsd %xmm6, 96(%rsp)
        movsd %xmm7, 104(%rsp)
        movq $0, 112(%rsp)
        .if \composite
        movq $0, 120(%rsp)
        movl 40(%r10), %eax             /* the result's kind, kept for after the call: the handler may */
        movl %eax, 128(%rsp)            /* free the closure, and its entry with it, as it returns */
        .endif
        movl 28(%r10), %ecx             /* count */
        movq 32(%r10), %rsi             /* places */
        leaq 136(%rsp), %rdx            /* the argument array */
        testl %ecx, %ecx
        jz 2f
1:      movzbl -1(%rsi,%rcx), %eax      /* from the last argument down */
        leaq (%rsp,%rax,8), %rax
        movq %rax, -8(%rdx,%rcx,8)
        subl $1, %ecx
        jnz 1b
2:      movq 16(%r10), %rdi             /* cif */
        leaq 112(%rsp), %rsi            /* the result's address */
        .if \composite
        cmpl $CFFI_RESULT_MEMORY, 40(%r10)
        jne 3f
        movq 0(%rsp), %rsi              /* in memory: the caller's, passed in rdi */
3:
        .endif
        movq 8(%r10), %rcx              /* user data */
        callq *(%r10)                   /* handler */
        movq 112(%rsp), %rax
        .if \composite
        movq 120(%rsp), %rdx
        movq %rax, %xmm0
        movq %rdx, %xmm1
        movl 128(%rsp), %ecx            /* the result's kind */
        cmpl $CFFI_RESULT_INTEGER_SSE, %ecx
        jne 4f
        movq %rdx, %xmm0
        jmp 9f
4:      cmpl $CFFI_RESULT_SSE_INTEGER, %ecx
        jne 5f
        movq %rdx, %rax
        jmp 9f
5:      cmpl $CFFI_RESULT_MEMORY, %ecx
        jne 6f
        movq 0(%rsp), %rax              /* the address the caller passed */
        jmp 9f
6:      cmpl $CFFI_RESULT_X87, %ecx
        jne 9f
        fldt 112(%rsp)                  /* a long double, in st(0) */
9:
        .else
        movq %rax, %xmm0
        .endif
        leave
        .cfi_def_cfa %rsp, 8
        retq
        .cfi_endproc
        .size \name, . - \name
        .endm

        array_entry cffi_enter_array, 0
        array_entry cffi_enter_array_composite, 1

/* Marks the object as compatible with CET's indirect branch tracking and shadow stack (IBT, SHSTK), so
   that a program built with -fcf-protection keeps them: the linker keeps a feature only where every
   object it links has it. Both are facts of this code: every place an indirect branch lands begins with
   endbr64 (the slots, and what a slot's jump reaches here: the dead stubs, cffi_enter_register_body,
   cffi_call_opaque, cffi_enter_array and cffi_enter_array_composite), and nothing but their own calls and rets touches a return address. Only under __CET__
   (what -fcf-protection defines), as the compiler marks C: SwiftPM assembles this file with its C
   targets' flags (-Xcc reaches it too), so without the flag no object beside this one is marked and a
   note would change nothing, and with it this object is marked with the rest (Scripts/check-cet-note.sh
   links such a program). */
#if defined(__CET__)
        feature_note 0xc0000002, 3     /* GNU_PROPERTY_X86_FEATURE_1_AND: IBT | SHSTK */
#endif

        .section .note.GNU-stack, "", @progbits

#elif defined(__aarch64__) && defined(__linux__)

/* `bti c` as the hint it is, for assemblers that do not know BTI: a valid target of the caller's `blr`
   where the page is guarded, a no-op elsewhere. The entries are reached by `br x16`, which a callee's own
   `bti c` accepts. */
#define BTI_C hint #34

        .section .text.delegatekit_trampolines, "ax", %progbits
        .balign CFFI_TABLE_SIZE
        .globl cffi_trampoline_table
        .hidden cffi_trampoline_table
        .type cffi_trampoline_table, %object
cffi_trampoline_table:
        /* `count` slots loading the context into `register` and jumping to the entry word's, each
           CFFI_SLOT_SIZE bytes exactly: the .org pads the slot, and stops the build if its instructions
           outgrow it. Slot `index`'s words lie index * (CFFI_SLOT_SIZE - CFFI_WORDS_SIZE) bytes nearer
           than CFFI_TABLE_SIZE; a literal load's offset counts from the instruction itself. */
        .macro slots count, register
        .rept \count
0:
        BTI_C
        ldr \register, . + CFFI_TABLE_SIZE - .Lslot_index * (CFFI_SLOT_SIZE - CFFI_WORDS_SIZE) - 4
        ldr x16, . + CFFI_TABLE_SIZE - .Lslot_index * (CFFI_SLOT_SIZE - CFFI_WORDS_SIZE) + 8 - 8
        br x16
        .org 0b + CFFI_SLOT_SIZE, 0
        .set .Lslot_index, .Lslot_index + 1
        .endr
        .endm
        .set .Lslot_index, 0
        slots CFFI_REGISTER_SLOTS, x5          /* REGISTERS */
        slots CFFI_CHAIN_SLOTS, x18            /* STATIC_CHAIN */
        .org cffi_trampoline_table + CFFI_TABLE_SIZE
        .size cffi_trampoline_table, CFFI_TABLE_SIZE

        .text
        .globl cffi_trampoline_dead_registers
        .hidden cffi_trampoline_dead_registers
        .type cffi_trampoline_dead_registers, %function
cffi_trampoline_dead_registers:
        BTI_C
        mov x0, x5
        b cffi_trampoline_stop
        .size cffi_trampoline_dead_registers, . - cffi_trampoline_dead_registers

        .globl cffi_trampoline_dead_chain
        .hidden cffi_trampoline_dead_chain
        .type cffi_trampoline_dead_chain, %function
cffi_trampoline_dead_chain:
        BTI_C
        mov x0, x18
        b cffi_trampoline_stop
        .size cffi_trampoline_dead_chain, . - cffi_trampoline_dead_chain

        /* Where a freed slot's entry points, of either kind: its context word holds the next free slot. */
        .globl cffi_trampoline_freed
        .hidden cffi_trampoline_freed
        .type cffi_trampoline_freed, %function
cffi_trampoline_freed:
        BTI_C
        adrp x0, cffi_trampoline_freed_message
        add x0, x0, :lo12:cffi_trampoline_freed_message
        b cffi_trampoline_stop
        .size cffi_trampoline_freed, . - cffi_trampoline_freed

        /* cffi_enter_register_body (Trampolines.h) on AAPCS64: the caller's x20 and return address kept
           on the stack, the body's function in x16 and its context in x20, called with every argument
           register in place; its result registers are the entry's. */
        .globl cffi_enter_register_body
        .hidden cffi_enter_register_body
        .type cffi_enter_register_body, %function
        .p2align 4
cffi_enter_register_body:
        .cfi_startproc
        BTI_C
        stp x20, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset x20, -16
        .cfi_offset x30, -8
        ldp x16, x20, [x5]
        blr x16
        ldp x20, x30, [sp], #16
        .cfi_def_cfa_offset 0
        .cfi_restore x20
        .cfi_restore x30
        ret
        .cfi_endproc
        .size cffi_enter_register_body, . - cffi_enter_register_body

        /* cffi_call_register_body (Trampolines.h) on AAPCS64: cffi_enter_register_body, its result's d0
           copied to x1, where a cffi_registers' second word comes back. */
        .globl cffi_call_register_body
        .hidden cffi_call_register_body
        .type cffi_call_register_body, %function
        .p2align 4
cffi_call_register_body:
        .cfi_startproc
        BTI_C
        stp x20, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset x20, -16
        .cfi_offset x30, -8
        ldp x16, x20, [x5]
        blr x16
        fmov x1, d0
        ldp x20, x30, [sp], #16
        .cfi_def_cfa_offset 0
        .cfi_restore x20
        .cfi_restore x30
        ret
        .cfi_endproc
        .size cffi_call_register_body, . - cffi_call_register_body

        /* cffi_call_opaque (Trampolines.h) on AAPCS64: the call record in x5, where a register entry takes
           its context. The registers go to a block on the stack (x0..x4 at 0, d0..d7 at 40, the result
           word at 104, zeroed); x0..x5 get the addresses of the arguments' registers in the block or, for
           a pack, x0 gets an array of those addresses (at 112); x8 the result word's address, x20 the
           function's context; x19 keeps the record across the call. The result word comes back in x0,
           sign-extended by the record's shift, and in x1 and d0. */
        .globl cffi_call_opaque
        .hidden cffi_call_opaque
        .type cffi_call_opaque, %function
        .p2align 4
cffi_call_opaque:
        .cfi_startproc
        BTI_C
        stp x29, x30, [sp, #-32]!
        .cfi_def_cfa_offset 32
        .cfi_offset x29, -32
        .cfi_offset x30, -24
        mov x29, sp
        .cfi_def_cfa x29, 32
        stp x19, x20, [sp, #16]
        .cfi_offset x19, -16
        .cfi_offset x20, -8
        sub sp, sp, #224                /* the block, the result word, the pack */
        stp x0, x1, [sp, #0]
        stp x2, x3, [sp, #16]
        str x4, [sp, #32]
        stp d0, d1, [sp, #40]
        stp d2, d3, [sp, #56]
        stp d4, d5, [sp, #72]
        stp d6, d7, [sp, #88]
        str xzr, [sp, #104]
        mov x19, x5
        ldr x20, [x19, #8]              /* context */
        add x8, sp, #104                /* the result's address */
        ldr x9, [x19, #24]              /* pack */
        cbnz x9, 1f
        ldp x0, x1, [x19, #32]          /* each argument's address */
        add x0, sp, x0
        add x1, sp, x1
        ldp x2, x3, [x19, #48]
        add x2, sp, x2
        add x3, sp, x3
        ldp x4, x5, [x19, #64]
        add x4, sp, x4
        add x5, sp, x5
        b 2f
1:      add x0, sp, #112                /* the pack: each argument's address, in an array */
        ldr x9, [x19, #24]              /* its length, from the last argument down */
        add x10, x19, #32
        mov x12, sp
3:      sub x9, x9, #1
        ldr x11, [x10, x9, lsl #3]
        add x11, x12, x11
        str x11, [x0, x9, lsl #3]
        cbnz x9, 3b
2:      ldr x16, [x19]
        blr x16
        ldr x2, [x19, #16]              /* result_shift */
        ldr x0, [sp, #104]
        lsl x0, x0, x2
        asr x0, x0, x2
        ldr x1, [sp, #104]
        ldr d0, [sp, #104]
        mov sp, x29
        .cfi_def_cfa sp, 32
        ldp x19, x20, [sp, #16]
        .cfi_restore x19
        .cfi_restore x20
        ldp x29, x30, [sp], #32
        .cfi_def_cfa_offset 0
        .cfi_restore x29
        .cfi_restore x30
        ret
        .cfi_endproc
        .size cffi_call_opaque, . - cffi_call_opaque

        /* cffi_call_pack (Trampolines.h) on AAPCS64: the pack (the argument array) in x0, the result's
           address in x8, the function's context in x20 (the caller's kept on the stack with the return
           address). */
        .globl cffi_call_pack
        .hidden cffi_call_pack
        .type cffi_call_pack, %function
        .p2align 4
cffi_call_pack:
        .cfi_startproc
        BTI_C
        stp x20, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset x20, -16
        .cfi_offset x30, -8
        ldp x16, x20, [x0]
        mov x8, x2
        mov x0, x1
        blr x16
        ldp x20, x30, [sp], #16
        .cfi_def_cfa_offset 0
        .cfi_restore x20
        .cfi_restore x30
        ret
        .cfi_endproc
        .size cffi_call_pack, . - cffi_call_pack

        /* cffi_call_spread (Trampolines.h) on AAPCS64: the function value's words in x0, the argument
           array in x1, the count (7 or 8) in x2, the result's address in x3. Every address fits a
           register (x0-x7); the result's goes in x8, the context in x20 (the caller's kept on the stack). */
        .globl cffi_call_spread
        .hidden cffi_call_spread
        .type cffi_call_spread, %function
        .p2align 4
cffi_call_spread:
        .cfi_startproc
        BTI_C
        stp x20, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset x20, -16
        .cfi_offset x30, -8
        ldp x16, x20, [x0]
        mov x8, x3
        mov x9, x1
        mov x10, x2
        ldp x0, x1, [x9]
        ldp x2, x3, [x9, #16]
        ldp x4, x5, [x9, #32]
        ldr x6, [x9, #48]
        cmp x10, #8
        b.lo 1f
        ldr x7, [x9, #56]
1:      blr x16
        ldp x20, x30, [sp], #16
        .cfi_def_cfa_offset 0
        .cfi_restore x20
        .cfi_restore x30
        ret
        .cfi_endproc
        .size cffi_call_spread, . - cffi_call_spread

        /* cffi_call_block (Trampolines.h) on AAPCS64: the function in x0, the block in x1, the stack words
           in x2 and their count in x3. x19 keeps the block and x20 the function across the copy and the
           call; the stack words go at the stack pointer, 16-aligned. */
        .globl cffi_call_block
        .hidden cffi_call_block
        .type cffi_call_block, %function
        .p2align 4
cffi_call_block:
        .cfi_startproc
        BTI_C
        stp x29, x30, [sp, #-32]!
        .cfi_def_cfa_offset 32
        .cfi_offset x29, -32
        .cfi_offset x30, -24
        mov x29, sp
        .cfi_def_cfa_register x29
        stp x19, x20, [sp, #16]
        .cfi_offset x19, -16
        .cfi_offset x20, -8
        mov x19, x1
        mov x20, x0
        lsl x9, x3, #3
        add x9, x9, #15
        and x9, x9, #~15
        sub sp, sp, x9
        mov x10, #0
1:      cmp x10, x3
        b.hs 2f
        ldr x11, [x2, x10, lsl #3]
        str x11, [sp, x10, lsl #3]
        add x10, x10, #1
        b 1b
2:      ldp x0, x1, [x19]
        ldp x2, x3, [x19, #16]
        ldp x4, x5, [x19, #32]
        ldp x6, x7, [x19, #48]
        ldp d0, d1, [x19, #64]
        ldp d2, d3, [x19, #80]
        ldp d4, d5, [x19, #96]
        ldp d6, d7, [x19, #112]
        ldr x8, [x19, #128]             /* where a result returned in memory goes */
        blr x20
        stp x0, x1, [x19]
        stp d0, d1, [x19, #64]
        stp d2, d3, [x19, #80]
        mov sp, x29
        ldp x19, x20, [sp, #16]
        .cfi_restore x19
        .cfi_restore x20
        ldp x29, x30, [sp], #32
        .cfi_def_cfa sp, 0
        .cfi_restore x29
        .cfi_restore x30
        ret
        .cfi_endproc
        .size cffi_call_block, . - cffi_call_block

        /* cffi_call_registers (Trampolines.h) on AAPCS64: the C function in x0, its integer registers in
           x1-x5, its vector registers in place. Calls it with x0-x4 and v0-v7, and returns x0 and d0 as a
           cffi_registers (x0 and x1), whether the function returned an integer or a floating value.
           Not hidden, unlike the symbols above: CFunction.call is @inlinable, so an optimized build of a
           user's module calls this by name, and a hidden symbol links only within one binary: such a
           module would not link against a shared library holding DelegateKit (a dynamic library product
           of the user's). On x86_64 it is an inline function of Trampolines.h, compiled into its caller. */
        .globl cffi_call_registers
        .type cffi_call_registers, %function
cffi_call_registers:
        .cfi_startproc
        BTI_C
        stp x29, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset x29, -16
        .cfi_offset x30, -8
        mov x29, sp
        mov x16, x0
        mov x0, x1
        mov x1, x2
        mov x2, x3
        mov x3, x4
        mov x4, x5
        blr x16
        fmov x1, d0
        ldp x29, x30, [sp], #16
        .cfi_def_cfa_offset 0
        .cfi_restore x29
        .cfi_restore x30
        ret
        .cfi_endproc
        .size cffi_call_registers, . - cffi_call_registers

        /* cffi_enter_array (Trampolines.h) on AAPCS64: the cffi_array_entry in x18, where a STATIC_CHAIN
           slot puts its context. A frame of the entry's `frame` bytes under the saved x29 and x30: x0..x7 at
           0, d0..d7 at 64, the result word at 128 (zeroed), libffi's argument array at 136, made from
           `places`; the caller's stack words start at frame + 16. The handler's result word comes back in
           x0 and d0. */
        .globl cffi_enter_array
        .hidden cffi_enter_array
        .type cffi_enter_array, %function
        .p2align 4
cffi_enter_array:
        .cfi_startproc
        BTI_C
        stp x29, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset x29, -16
        .cfi_offset x30, -8
        mov x29, sp
        .cfi_def_cfa x29, 16
        ldr w9, [x18, #24]              /* frame */
        sub sp, sp, x9
        stp x0, x1, [sp, #0]
        stp x2, x3, [sp, #16]
        stp x4, x5, [sp, #32]
        stp x6, x7, [sp, #48]
        stp d0, d1, [sp, #64]
        stp d2, d3, [sp, #80]
        stp d4, d5, [sp, #96]
        stp d6, d7, [sp, #112]
        str xzr, [sp, #128]
        ldr w9, [x18, #28]              /* count */
        ldr x10, [x18, #32]             /* places */
        add x2, sp, #136                /* the argument array */
        mov x12, sp
        cbz w9, 2f
1:      sub w9, w9, #1                  /* from the last argument down */
        ldrb w11, [x10, x9]
        add x11, x12, x11, lsl #3
        str x11, [x2, x9, lsl #3]
        cbnz w9, 1b
2:      ldr x0, [x18, #16]              /* cif */
        add x1, sp, #128                /* the result's address */
        ldr x3, [x18, #8]               /* user data */
        ldr x16, [x18]                  /* handler */
        blr x16
        ldr x0, [sp, #128]
        ldr d0, [sp, #128]
        mov sp, x29
        .cfi_def_cfa sp, 16
        ldp x29, x30, [sp], #16
        .cfi_def_cfa_offset 0
        .cfi_restore x29
        .cfi_restore x30
        ret
        .cfi_endproc
        .size cffi_enter_array, . - cffi_enter_array

/* Marks the object as BTI-compatible (and PAC: nothing here signs a return address), so that a program
   built with branch protection keeps it. */
#if defined(__ARM_FEATURE_BTI_DEFAULT) || defined(__ARM_FEATURE_PAC_DEFAULT)
        feature_note 0xc0000000, 3     /* GNU_PROPERTY_AARCH64_FEATURE_1_AND: BTI | PAC */
#endif

        .section .note.GNU-stack, "", %progbits

#endif
