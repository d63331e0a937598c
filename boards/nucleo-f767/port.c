/* NUCLEO-F767ZI: 216 MHz from the ST-LINK's 8 MHz MCO (HSE bypass, PLL M=4 N=216 P=2, over-drive,
 * 7 flash wait states), console on USART3 (PD8 TX, PD9 RX, AF7) = the ST-LINK virtual COM port,
 * DWT cycle counter. Registers from RM0410. Not yet run on hardware: built and size-checked only. */
#include <stdint.h>

#include "mcu/port.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define RCC_CR REG(0x40023800u)
#define RCC_PLLCFGR REG(0x40023804u)
#define RCC_CFGR REG(0x40023808u)
#define RCC_AHB1ENR REG(0x40023830u)
#define RCC_APB1ENR REG(0x40023840u)
#define PWR_CR1 REG(0x40007000u)
#define PWR_CSR1 REG(0x40007004u)
#define FLASH_ACR REG(0x40023C00u)
#define GPIOD_MODER REG(0x40020C00u)
#define GPIOD_AFRH REG(0x40020C24u)
#define USART3_CR1 REG(0x40004800u)
#define USART3_BRR REG(0x4000480Cu)
#define USART3_ISR REG(0x4000481Cu)
#define USART3_RDR REG(0x40004824u)
#define USART3_TDR REG(0x40004828u)
#define DEMCR REG(0xE000EDFCu)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CYCCNT REG(0xE0001004u)
#define DWT_LAR REG(0xE0001FB0u)

#define CORE_HZ 216000000u
#define APB1_HZ (CORE_HZ / 4u)
#define BAUD 115200u
#define SPIN_LIMIT 10000000u

static uint32_t g_cycles_high;
static uint32_t g_cycles_last;

static void wait_set(volatile uint32_t *reg, uint32_t mask) {
  for (uint32_t i = 0; i < SPIN_LIMIT && (*reg & mask) != mask; ++i) {
  }
}

static void clock_init(void) {
  RCC_APB1ENR |= 1u << 28;                                   /* PWR */
  PWR_CR1 |= 3u << 14;                                        /* voltage scale 1 */
  RCC_CR |= (1u << 18) | (1u << 16);                          /* HSE bypass + on */
  wait_set(&RCC_CR, 1u << 17);
  RCC_PLLCFGR = 4u | (216u << 6) | (0u << 16) | (1u << 22) | (9u << 24);
  RCC_CR |= 1u << 24;                                         /* PLL on */
  PWR_CR1 |= 1u << 16;                                        /* over-drive */
  wait_set(&PWR_CSR1, 1u << 16);
  PWR_CR1 |= 1u << 17;
  wait_set(&PWR_CSR1, 1u << 17);
  wait_set(&RCC_CR, 1u << 25);
  FLASH_ACR = 7u | (1u << 8) | (1u << 9);                     /* 7 WS, prefetch, ART */
  RCC_CFGR = (5u << 10) | (4u << 13) | 2u;                    /* APB1 /4, APB2 /2, SW = PLL */
  for (uint32_t i = 0; i < SPIN_LIMIT && ((RCC_CFGR >> 2) & 3u) != 2u; ++i) {
  }
}

void mcu_port_init(void) {
  clock_init();
  RCC_AHB1ENR |= 1u << 3;                                     /* GPIOD */
  RCC_APB1ENR |= 1u << 18;                                    /* USART3 */
  GPIOD_MODER = (GPIOD_MODER & ~(0xFu << 16)) | (0xAu << 16); /* PD8, PD9 alternate */
  GPIOD_AFRH = (GPIOD_AFRH & ~0xFFu) | 0x77u;                 /* AF7 */
  USART3_BRR = (APB1_HZ + BAUD / 2u) / BAUD;
  USART3_CR1 = (1u << 3) | (1u << 2) | 1u;                    /* TE, RE, UE */
  DEMCR |= 1u << 24;
  DWT_LAR = 0xC5ACCE55u;
  DWT_CYCCNT = 0u;
  DWT_CTRL |= 1u;
}

/* 64-bit extension of CYCCNT: correct while called at least once per 2^32 cycles (19.8 s). */
uint64_t mcu_port_cycles(void) {
  uint32_t now = DWT_CYCCNT;
  if (now < g_cycles_last) {
    g_cycles_high++;
  }
  g_cycles_last = now;
  return ((uint64_t)g_cycles_high << 32) | now;
}

uint32_t mcu_port_cycle_hz(void) { return CORE_HZ; }

void mcu_port_cycles_restart(void) {
  DWT_CYCCNT = 0u;
  g_cycles_high = 0u;
  g_cycles_last = 0u;
}

int mcu_port_getc(uint32_t timeout_ms) {
  uint64_t limit = (uint64_t)timeout_ms * (CORE_HZ / 1000u);
  uint64_t start = mcu_port_cycles();
  while ((USART3_ISR & (1u << 5)) == 0u) {
    if ((USART3_ISR & (1u << 3)) != 0u) {
      REG(0x40004820u) = 1u << 3;                             /* ICR: clear ORE */
    }
    if (timeout_ms != 0u && mcu_port_cycles() - start > limit) {
      return -1;
    }
  }
  return (int)(USART3_RDR & 0xFFu);
}

void mcu_port_putc(uint8_t c) {
  while ((USART3_ISR & (1u << 7)) == 0u) {
  }
  USART3_TDR = c;
}

void mcu_port_exit(int code) {
  (void)code;
  for (;;) {
    __asm volatile("wfi");
  }
}
