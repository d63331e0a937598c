/* SysTick cycle counter and semihosting exit, shared by the QEMU-machine ports (CMSDK UART and
 * STM32F4 USART). Counts at the core clock MCU_CLOCK_HZ; under QEMU -icount shift=0 one
 * instruction is one ns of virtual time. */
#include <stdint.h>

#include "mcu/port.h"
#include "mcu/port_systick.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SYST_RELOAD 0x00FFFFFFu
#define SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)
#define ICSR_PENDSTCLR (1u << 25)

static volatile uint32_t g_systick_wraps;

void SysTick_Handler(void) { g_systick_wraps++; }

void mcu_systick_start(void) {
  SYST_RVR = SYST_RELOAD;
  SYST_CVR = 0u;
  SYST_CSR = 7u; /* core clock, interrupt, enable */
}

/* Ticks since the last restart. The interrupt counts a wrap when the counter steps from 1 to 0,
 * so 0 is the first tick of the next period: ticks into the period are (-value) mod 2^24. A wrap
 * whose interrupt is still pending (latency) is counted from ICSR.PENDSTSET. Monotonic. */
uint64_t mcu_port_cycles(void) {
  uint32_t wraps, pending, value, again;
  do {
    wraps = g_systick_wraps;
    pending = SCB_ICSR & ICSR_PENDSTSET;
    value = SYST_CVR;
    again = (SCB_ICSR & ICSR_PENDSTSET) != pending || g_systick_wraps != wraps;
  } while (again);
  uint64_t periods = (uint64_t)wraps + (pending != 0u ? 1u : 0u);
  return periods * (SYST_RELOAD + 1u) + ((0u - value) & SYST_RELOAD);
}

uint32_t mcu_port_cycle_hz(void) { return MCU_CLOCK_HZ; }

void mcu_port_cycles_restart(void) {
  SYST_CSR = 0u;
  SCB_ICSR = ICSR_PENDSTCLR; /* a wrap pending from before the restart must not count */
  SYST_CVR = 0u;
  g_systick_wraps = 0u;
  SYST_CSR = 7u;
  for (uint32_t i = 0; i < 1000u && SYST_CVR == 0u; ++i) {
    /* wait for the reload: counting then starts on a tick boundary */
  }
}

/* About 260 instructions between two polls of the console: about 10 us at 25 MHz, well inside
 * the 87 us a byte takes at 115200 baud. Under QEMU -icount a register read costs some 20 times
 * its virtual time in wall time, and the pause's plain instructions almost nothing: with it a
 * 200 ms timeout passes in about 0.3 s of wall time instead of 4 s, and QEMU's I/O thread gets
 * the lock more often. The wait sums the raw counter's steps between polls (mod 2^24, polls are
 * far closer than one period), so it needs neither the wrap interrupt nor a counter that never
 * restarts. */
void mcu_systick_pause(void) {
  for (uint32_t i = 0; i < 8u; ++i) {
    __asm volatile(".rept 32\n nop\n .endr");
  }
}

int mcu_systick_wait_bits(const volatile uint32_t *status, uint32_t mask, uint32_t timeout_ms) {
  uint64_t limit = (uint64_t)timeout_ms * (MCU_CLOCK_HZ / 1000u);
  uint64_t waited = 0u;
  uint32_t last = SYST_CVR;
  while ((*status & mask) == 0u) {
    mcu_systick_pause();
    if (timeout_ms != 0u) {
      uint32_t now = SYST_CVR;
      waited += (last - now) & SYST_RELOAD;
      last = now;
      if (waited > limit) {
        return -1;
      }
    }
  }
  return 0;
}

void mcu_port_exit(int code) {
  /* semihosting SYS_EXIT_EXTENDED: r0 = 0x20, r1 -> {ADP_Stopped_ApplicationExit, code} */
  volatile uint32_t block[2] = {0x20026u, (uint32_t)code};
  register uint32_t r0 __asm("r0") = 0x20u;
  register volatile uint32_t *r1 __asm("r1") = block;
  __asm volatile("bkpt 0xAB" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {
  }
}
