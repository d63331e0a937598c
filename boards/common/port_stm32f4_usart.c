/* Port for STM32F4 parts (QEMU netduinoplus2 = STM32F405): USART console (SR/DR/BRR/CR1 layout),
 * SysTick cycle counter at the core clock, semihosting exit under QEMU. Registers from RM0090.
 * The GPIO/RCC set-up is what a real board needs; QEMU ignores it. */
#include <stdint.h>

#include "mcu/port.h"

#ifndef MCU_UART_BASE
#error "MCU_UART_BASE must be defined by the board"
#endif
#ifndef MCU_CLOCK_HZ
#error "MCU_CLOCK_HZ must be defined by the board"
#endif
#ifndef MCU_BAUD
#define MCU_BAUD 115200u
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))
#define USART_SR REG(MCU_UART_BASE + 0x00u)
#define USART_DR REG(MCU_UART_BASE + 0x04u)
#define USART_BRR REG(MCU_UART_BASE + 0x08u)
#define USART_CR1 REG(MCU_UART_BASE + 0x0Cu)
#define RCC_AHB1ENR REG(0x40023830u)
#define RCC_APB2ENR REG(0x40023844u)
#define GPIOA_MODER REG(0x40020000u)
#define GPIOA_AFRH REG(0x40020024u)
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define SYST_RELOAD 0x00FFFFFFu
#define SCB_ICSR REG(0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)
#define ICSR_PENDSTCLR (1u << 25)

static volatile uint32_t g_systick_wraps;

void SysTick_Handler(void) { g_systick_wraps++; }

void mcu_port_init(void) {
  RCC_AHB1ENR |= 1u << 0;  /* GPIOA */
  RCC_APB2ENR |= 1u << 4;  /* USART1 */
  GPIOA_MODER = (GPIOA_MODER & ~(0xFu << 18)) | (0xAu << 18);  /* PA9, PA10 alternate */
  GPIOA_AFRH = (GPIOA_AFRH & ~(0xFFu << 4)) | (0x77u << 4);    /* AF7 = USART1 */
  USART_BRR = (MCU_CLOCK_HZ / 2u + MCU_BAUD / 2u) / MCU_BAUD;  /* APB2 = HCLK / 2 */
  USART_CR1 = (1u << 13) | (1u << 3) | (1u << 2);              /* UE, TE, RE */
  SYST_RVR = SYST_RELOAD;
  SYST_CVR = 0u;
  SYST_CSR = 7u;
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

/* About 260 instructions between two polls of the console: about 2 us at 168 MHz, well inside
 * the 87 us a byte takes at 115200 baud. Under QEMU -icount a register read costs some 20 times
 * its virtual time in wall time, and the pause's plain instructions almost nothing: with it a
 * 200 ms timeout passes in about 0.3 s of wall time instead of 4 s, and QEMU's I/O thread gets
 * the lock more often. */
static void poll_pause(void) {
  for (uint32_t i = 0; i < 8u; ++i) {
    __asm volatile(".rept 32\n nop\n .endr");
  }
}

/* The timeout sums the raw counter's steps between polls (mod 2^24, polls are far closer than
 * one period), so it needs neither the wrap interrupt nor a counter that never restarts. */
int mcu_port_getc(uint32_t timeout_ms) {
  uint64_t limit = (uint64_t)timeout_ms * (MCU_CLOCK_HZ / 1000u);
  uint64_t waited = 0u;
  uint32_t last = SYST_CVR;
  while ((USART_SR & (1u << 5)) == 0u) {
    poll_pause();
    if (timeout_ms != 0u) {
      uint32_t now = SYST_CVR;
      waited += (last - now) & SYST_RELOAD;
      last = now;
      if (waited > limit) {
        return -1;
      }
    }
  }
  return (int)(USART_DR & 0xFFu);
}

void mcu_port_putc(uint8_t c) {
  while ((USART_SR & (1u << 7)) == 0u) {
  }
  USART_DR = c;
}

void mcu_port_exit(int code) {
  volatile uint32_t block[2] = {0x20026u, (uint32_t)code};
  register uint32_t r0 __asm("r0") = 0x20u;
  register volatile uint32_t *r1 __asm("r1") = block;
  __asm volatile("bkpt 0xAB" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {
  }
}
