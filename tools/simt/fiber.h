/* Fibers for the SIMT executor: a stack and a saved context each, switched cooperatively on one
 * OS thread. On x86-64 the switch saves only what the ABI says a call preserves (rbx, rbp,
 * r12-r15, the SSE and x87 control words), some tens of nanoseconds; elsewhere it is ucontext's,
 * whose signal-mask system calls cost about ten times more. */
#ifndef GPUISO_SIMT_FIBER_H
#define GPUISO_SIMT_FIBER_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)

struct fiber {
  void *sp;
};

extern "C" void simt_fiber_switch(void **save_sp, void *to_sp);
extern "C" void simt_fiber_start(void); /* calls r12(r13) on a new stack; never returns */

asm(R"(
  .text
  .globl simt_fiber_switch
  .type simt_fiber_switch, @function
simt_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size simt_fiber_switch, .-simt_fiber_switch
  .globl simt_fiber_start
  .type simt_fiber_start, @function
simt_fiber_start:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size simt_fiber_start, .-simt_fiber_start
)");

/* A fiber that will run fn(arg) on [stack, stack + size) when first switched to. */
static inline void fiber_init(fiber *f, char *stack, size_t size, void (*fn)(void *), void *arg) {
  uintptr_t *sp = (uintptr_t *)(((uintptr_t)stack + size) & ~(uintptr_t)15);
  uint32_t control[2];
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(control[0]), "=m"(control[1]));
  /* the first switch returns to the start with the stack 16-aligned, as a call then needs */
  *--sp = (uintptr_t)simt_fiber_start;
  *--sp = 0;                          /* rbp */
  *--sp = 0;                          /* rbx */
  *--sp = (uintptr_t)fn;              /* r12 */
  *--sp = (uintptr_t)arg;             /* r13 */
  *--sp = 0;                          /* r14 */
  *--sp = 0;                          /* r15 */
  *--sp = (uintptr_t)control[0] | ((uintptr_t)(control[1] & 0xffff) << 32);
  f->sp = sp;
}

static inline void fiber_switch(fiber *from, fiber *to) { simt_fiber_switch(&from->sp, to->sp); }

#else

#include <ucontext.h>

struct fiber {
  ucontext_t uc;
};

static void fiber_entry(unsigned fn_hi, unsigned fn_lo, unsigned arg_hi, unsigned arg_lo) {
  void (*fn)(void *) = (void (*)(void *))(((uintptr_t)fn_hi << 32) | fn_lo);
  fn((void *)(((uintptr_t)arg_hi << 32) | arg_lo));
}

static inline void fiber_init(fiber *f, char *stack, size_t size, void (*fn)(void *), void *arg) {
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = stack;
  f->uc.uc_stack.ss_size = size;
  f->uc.uc_link = NULL;
  uintptr_t fp = (uintptr_t)fn, ap = (uintptr_t)arg;
  makecontext(&f->uc, (void (*)())fiber_entry, 4, (unsigned)(fp >> 32), (unsigned)fp, (unsigned)(ap >> 32),
              (unsigned)ap);
}

static inline void fiber_switch(fiber *from, fiber *to) { swapcontext(&from->uc, &to->uc); }

#endif

#endif
