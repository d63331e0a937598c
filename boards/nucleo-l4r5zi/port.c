/* NUCLEO-L4R5ZI (the MLPerf Tiny reference board): 120 MHz from MSI 4 MHz (PLL N=60 R=2, range 1
 * boost, 5 flash wait states), console on LPUART1 (PG7 TX, PG8 RX, AF8; PG needs VDDIO2) = the
 * ST-LINK virtual COM port, DWT cycle counter (both driven by ../common/port_stm32_dwt.c).
 * Registers from RM0432.
 * Not yet run on hardware: built and size-checked only. */
#include <stdint.h>

#include "mcu/port.h"
#include "mcu/port_stm32.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define RCC_CR REG(0x40021000u)
#define RCC_CFGR REG(0x40021008u)
#define RCC_PLLCFGR REG(0x4002100Cu)
#define RCC_AHB2ENR REG(0x4002104Cu)
#define RCC_APB1ENR1 REG(0x40021058u)
#define RCC_APB1ENR2 REG(0x4002105Cu)
#define PWR_CR2 REG(0x40007004u)
#define PWR_CR5 REG(0x40007080u)
#define FLASH_ACR REG(0x40022000u)
#define GPIOG_MODER REG(0x48001800u)
#define GPIOG_AFRL REG(0x48001820u)
#define GPIOG_AFRH REG(0x48001824u)
#define LPUART_BASE 0x40008000u
#define LPUART_CR1 REG(LPUART_BASE + 0x00u)
#define LPUART_BRR REG(LPUART_BASE + 0x0Cu)

#define CORE_HZ 120000000u
/* The clock tree below sets 120 MHz; a board.toml whose clock_hz (MCU_CLOCK_HZ) says otherwise
 * would time and baud wrongly, so it does not compile. */
#if defined(MCU_CLOCK_HZ)
_Static_assert(MCU_CLOCK_HZ == CORE_HZ, "board.toml's MCU_CLOCK_HZ differs from this port's clock tree");
#endif
#define BAUD 115200u
#define SPIN_LIMIT 10000000u

static void clock_init(void) {
  RCC_APB1ENR1 |= 1u << 28;                                     /* PWR */
  PWR_CR5 &= ~(1u << 8);                                         /* range 1 boost */
  FLASH_ACR = (FLASH_ACR & ~0xFu) | 5u;                          /* 5 wait states */
  RCC_PLLCFGR = 1u | (0u << 4) | (60u << 8) | (1u << 24);        /* MSI, M=1, N=60, R=2, REN */
  RCC_CR |= 1u << 24;                                            /* PLL on */
  for (uint32_t i = 0; i < SPIN_LIMIT && (RCC_CR & (1u << 25)) == 0u; ++i) {
  }
  RCC_CFGR = (RCC_CFGR & ~3u) | 3u;                              /* SW = PLL */
  for (uint32_t i = 0; i < SPIN_LIMIT && ((RCC_CFGR >> 2) & 3u) != 3u; ++i) {
  }
}

void mcu_port_init(void) {
  clock_init();
  PWR_CR2 |= 1u << 9;                                            /* VDDIO2 valid: port G */
  RCC_AHB2ENR |= 1u << 6;                                        /* GPIOG */
  RCC_APB1ENR2 |= 1u << 0;                                       /* LPUART1 */
  GPIOG_MODER = (GPIOG_MODER & ~(0xFu << 14)) | (0xAu << 14);    /* PG7, PG8 alternate */
  GPIOG_AFRL = (GPIOG_AFRL & ~(0xFu << 28)) | (8u << 28);
  GPIOG_AFRH = (GPIOG_AFRH & ~0xFu) | 8u;
  LPUART_BRR = (uint32_t)(((uint64_t)CORE_HZ * 256u + BAUD / 2u) / BAUD);
  LPUART_CR1 = (1u << 3) | (1u << 2) | 1u;                       /* TE, RE, UE */
  mcu_stm32_dwt_start();
}

uint32_t mcu_port_cycle_hz(void) { return CORE_HZ; }

int mcu_port_getc(uint32_t timeout_ms) {
  return mcu_stm32_usart_getc(LPUART_BASE, (uint64_t)timeout_ms * (CORE_HZ / 1000u));
}

void mcu_port_putc(uint8_t c) { mcu_stm32_usart_putc(LPUART_BASE, c); }
