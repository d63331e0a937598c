/* Cortex-M reset: paint the stack, copy .data, zero .bss, enable the FPU, run main.
 * Shared by every Cortex-M board; the vector table holds only what the firmware uses. */
#include <stdint.h>

#define MCU_STACK_PAINT 0xC0DEC0DEu

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _sstack, _estack;
extern int main(void);
void mcu_reset_handler(void);
void mcu_default_handler(void);
void SysTick_Handler(void) __attribute__((weak, alias("mcu_default_handler")));

__attribute__((section(".isr_vector"), used)) static const void *const g_vectors[16] = {
    &_estack,
    (const void *)mcu_reset_handler,
    (const void *)mcu_default_handler, /* NMI */
    (const void *)mcu_default_handler, /* HardFault */
    (const void *)mcu_default_handler, /* MemManage */
    (const void *)mcu_default_handler, /* BusFault */
    (const void *)mcu_default_handler, /* UsageFault */
    0, 0, 0, 0,
    (const void *)mcu_default_handler, /* SVCall */
    (const void *)mcu_default_handler, /* DebugMon */
    0,
    (const void *)mcu_default_handler, /* PendSV */
    (const void *)SysTick_Handler,
};

__attribute__((noreturn)) void mcu_port_exit(int code);

void mcu_default_handler(void) { mcu_port_exit(0x7F); }

__attribute__((noreturn, naked)) void mcu_reset_handler(void) {
  __asm volatile(
      "ldr r0, =_sstack\n"      /* paint [_sstack, sp - 32) */
      "mov r1, sp\n"
      "sub r1, r1, #32\n"
      "ldr r2, =0xC0DEC0DE\n"
      "1: cmp r0, r1\n"
      "bhs 2f\n"
      "str r2, [r0], #4\n"
      "b 1b\n"
      "2: b mcu_reset_c\n");
}

__attribute__((noreturn, used)) void mcu_reset_c(void) {
  uint32_t *src = &_sidata;
  for (uint32_t *dst = &_sdata; dst < &_edata;) {
    *dst++ = *src++;
  }
  for (uint32_t *dst = &_sbss; dst < &_ebss;) {
    *dst++ = 0;
  }
#if defined(__ARM_FP)
  volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
  *cpacr |= 0xFu << 20;
  __asm volatile("dsb\n isb" ::: "memory");
#endif
  int rc = main();
  mcu_port_exit(rc);
}

/* Bytes of stack never written since reset (the paint still intact), from the bottom up. */
uint32_t mcu_stack_unused_bytes(void) {
  const uint32_t *p = &_sstack;
  while (p < &_estack && *p == MCU_STACK_PAINT) {
    ++p;
  }
  return (uint32_t)((uintptr_t)p - (uintptr_t)&_sstack);
}

uint32_t mcu_stack_size_bytes(void) {
  return (uint32_t)((uintptr_t)&_estack - (uintptr_t)&_sstack);
}
