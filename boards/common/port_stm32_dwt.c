/* The STM32 ports' cycle counter (DWT CYCCNT, extended to 64 bits) and exit (mcu/port_stm32.h).
 * Registers from the ARMv7-M ARM. */
#include <stdint.h>

#include "mcu/port.h"
#include "mcu/port_stm32.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define DWT_CYCCNT REG(0xE0001004u)

static uint32_t g_cycles_high;
static uint32_t g_cycles_last;

/* 64-bit extension of CYCCNT: correct while called at least once per 2^32 cycles (19.8 s at
 * 216 MHz). */
uint64_t mcu_port_cycles(void) {
  uint32_t now = DWT_CYCCNT;
  if (now < g_cycles_last) {
    g_cycles_high++;
  }
  g_cycles_last = now;
  return ((uint64_t)g_cycles_high << 32) | now;
}

void mcu_port_cycles_restart(void) {
  DWT_CYCCNT = 0u;
  g_cycles_high = 0u;
  g_cycles_last = 0u;
}

void mcu_port_exit(int code) {
  (void)code;
  for (;;) {
    __asm volatile("wfi");
  }
}
