/* STM32F74x/F76x/F77x boards at 216 MHz: HSE (an ST-LINK MCO in bypass, or a crystal) through the
 * PLL (M from the board, N so that the VCO runs at 432 MHz, P=2), over-drive, 7 flash wait states;
 * the ART accelerator and flash prefetch, the Cortex-M7's instruction and data caches (what makes
 * an M7 run near one instruction per cycle from flash; the QEMU twin models none of them, nor
 * wait states or dual issue, so its counts are instructions, not cycles);
 * the console on the USART wired to the ST-LINK virtual COM port; DWT cycle counter (both driven
 * by port_stm32_dwt.c). Registers from RM0410 (F76x/F77x) and RM0385 (F74x/F75x), identical for
 * what is used here. Each board's board.toml sets:
 *   MCU_HSE_BYPASS        1: external clock (NUCLEO: the ST-LINK's 8 MHz MCO); 0: a crystal
 *   MCU_PLL_M             HSE MHz / 2 (NUCLEO 4) or HSE MHz (DISCO's 25 MHz crystal: 25)
 *   MCU_PLL_N             216 with M = HSE/2, 432 with M = HSE (VCO input 2 or 1 MHz)
 *   MCU_CONSOLE_USART3_PD8_PD9 or MCU_CONSOLE_USART1_PA9_PB7: the console pins (AF7)
 *   MCU_TIMESTAMP_GPIO, MCU_TIMESTAMP_PIN (optional): port (0 = A) and pin of the MLPerf Tiny
 *                         energy mode's timestamp output, set up in energy builds only
 * The build sets MCU_CONSOLE_BAUD (9600 in MLPerf Tiny energy mode; 115200 without it).
 * Not yet run on hardware: built and size-checked only. */
#include <stdint.h>

#include "mcu/port.h"
#include "mcu/port_stm32.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define RCC_CR REG(0x40023800u)
#define RCC_PLLCFGR REG(0x40023804u)
#define RCC_CFGR REG(0x40023808u)
#define RCC_AHB1ENR REG(0x40023830u)
#define RCC_APB1ENR REG(0x40023840u)
#define PWR_CR1 REG(0x40007000u)
#define PWR_CSR1 REG(0x40007004u)
#define FLASH_ACR REG(0x40023C00u)
/* Cortex-M7 system control block (ARMv7-M ARM B3.2; Cortex-M7 TRM, cache maintenance) */
#define SCB_CCR REG(0xE000ED14u)
#define SCB_CCSIDR REG(0xE000ED80u)
#define SCB_CSSELR REG(0xE000ED84u)
#define SCB_ICIALLU REG(0xE000EF50u)
#define SCB_DCISW REG(0xE000EF60u)
#define CCR_DC (1u << 16)
#define CCR_IC (1u << 17)
#define RCC_APB2ENR REG(0x40023844u)
#define GPIO_MODER(port) REG(0x40020000u + 0x400u * (port))
#define GPIO_AFRL(port) REG(0x40020020u + 0x400u * (port))
#define GPIO_AFRH(port) REG(0x40020024u + 0x400u * (port))
#define GPIO_BSRR(port) REG(0x40020018u + 0x400u * (port))
#define GPIO_A 0u
#define GPIO_B 1u
#define GPIO_D 3u
#if defined(MCU_CONSOLE_USART3_PD8_PD9)
#define USART_BASE 0x40004800u
#define USART_CLOCK_HZ (CORE_HZ / 4u) /* APB1 */
#elif defined(MCU_CONSOLE_USART1_PA9_PB7)
#define USART_BASE 0x40011000u
#define USART_CLOCK_HZ (CORE_HZ / 2u) /* APB2 */
#else
#error "board.toml must define the console: MCU_CONSOLE_USART3_PD8_PD9 or MCU_CONSOLE_USART1_PA9_PB7"
#endif
#define USART_CR1 REG(USART_BASE + 0x00u)
#define USART_BRR REG(USART_BASE + 0x0Cu)
#define DWT_CYCCNT REG(0xE0001004u)

#define CORE_HZ 216000000u
/* The clock tree below sets 216 MHz; a board.toml whose clock_hz (MCU_CLOCK_HZ) says otherwise
 * would time and baud wrongly, so it does not compile. */
#if defined(MCU_CLOCK_HZ)
_Static_assert(MCU_CLOCK_HZ == CORE_HZ, "board.toml's MCU_CLOCK_HZ differs from this port's clock tree");
#endif
#ifdef MCU_CONSOLE_BAUD
#define BAUD MCU_CONSOLE_BAUD
#else
#define BAUD 115200u
#endif
#define SPIN_LIMIT 10000000u

static void wait_set(volatile uint32_t *reg, uint32_t mask) {
  for (uint32_t i = 0; i < SPIN_LIMIT && (*reg & mask) != mask; ++i) {
  }
}

static void clock_init(void) {
  RCC_APB1ENR |= 1u << 28;                                   /* PWR */
  PWR_CR1 |= 3u << 14;                                        /* voltage scale 1 */
  RCC_CR |= (MCU_HSE_BYPASS ? 1u << 18 : 0u) | (1u << 16);   /* HSE (bypass) on */
  wait_set(&RCC_CR, 1u << 17);
  /* PLLSRC = HSE, P = 2, Q = 9 (48 MHz from the 432 MHz VCO) */
  RCC_PLLCFGR = MCU_PLL_M | (MCU_PLL_N << 6) | (0u << 16) | (1u << 22) | (9u << 24);
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

static inline void barriers(void) {
  __asm__ volatile("dsb 0xF\n\tisb 0xF" ::: "memory");
}

/* Invalidate, then enable, the instruction cache and the data cache (invalidated by set and way
 * from the geometry CCSIDR reports: on the M7, 32-byte lines, 4 ways). */
static void caches_init(void) {
  barriers();
  SCB_ICIALLU = 0u;
  barriers();
  SCB_CCR |= CCR_IC;
  barriers();
  SCB_CSSELR = 0u; /* level 1 data cache */
  barriers();
  uint32_t ccsidr = SCB_CCSIDR;
  uint32_t sets = ((ccsidr >> 13) & 0x7FFFu) + 1u;
  uint32_t ways = ((ccsidr >> 3) & 0x3FFu) + 1u;
  uint32_t set_shift = (ccsidr & 7u) + 4u; /* log2 of the line's bytes */
  uint32_t way_shift = 32u - (uint32_t)__builtin_ctz(ways == 1u ? 1u : ways);
  for (uint32_t s = 0; s < sets; ++s) {
    for (uint32_t w = 0; w < ways; ++w) {
      SCB_DCISW = (s << set_shift) | (ways == 1u ? 0u : w << way_shift);
    }
  }
  barriers();
  SCB_CCR |= CCR_DC;
  barriers();
}

/* Pin `pin` of GPIO `port` in alternate function 7 (USART1..3). */
static void pin_af7(uint32_t port, uint32_t pin) {
  GPIO_MODER(port) = (GPIO_MODER(port) & ~(3u << (2u * pin))) | (2u << (2u * pin));
  if (pin < 8u) {
    GPIO_AFRL(port) = (GPIO_AFRL(port) & ~(0xFu << (4u * pin))) | (7u << (4u * pin));
  } else {
    GPIO_AFRH(port) = (GPIO_AFRH(port) & ~(0xFu << (4u * (pin - 8u)))) | (7u << (4u * (pin - 8u)));
  }
}

static void console_init(void) {
#if defined(MCU_CONSOLE_USART3_PD8_PD9)
  RCC_AHB1ENR |= 1u << GPIO_D;
  RCC_APB1ENR |= 1u << 18; /* USART3 */
  pin_af7(GPIO_D, 8u);
  pin_af7(GPIO_D, 9u);
#else
  RCC_AHB1ENR |= (1u << GPIO_A) | (1u << GPIO_B);
  RCC_APB2ENR |= 1u << 4; /* USART1 */
  pin_af7(GPIO_A, 9u);
  pin_af7(GPIO_B, 7u);
#endif
  USART_BRR = (USART_CLOCK_HZ + BAUD / 2u) / BAUD;
  USART_CR1 = (1u << 3) | (1u << 2) | 1u; /* TE, RE, UE */
}

#if MCU_MLPERF_ENERGY
#if !defined(MCU_TIMESTAMP_GPIO) || !defined(MCU_TIMESTAMP_PIN)
#error "energy mode needs the board's timestamp pin: MCU_TIMESTAMP_GPIO and MCU_TIMESTAMP_PIN"
#endif
/* A push-pull output that idles high: the level is set before the pin becomes an output, so
 * setting it up makes no edge. */
static void timestamp_pin_init(void) {
  RCC_AHB1ENR |= 1u << MCU_TIMESTAMP_GPIO;
  (void)RCC_AHB1ENR; /* the port's clock runs before its registers are written (RM0410 5.2.12) */
  GPIO_BSRR(MCU_TIMESTAMP_GPIO) = 1u << MCU_TIMESTAMP_PIN;
  uint32_t moder = GPIO_MODER(MCU_TIMESTAMP_GPIO) & ~(3u << (2u * MCU_TIMESTAMP_PIN));
  GPIO_MODER(MCU_TIMESTAMP_GPIO) = moder | (1u << (2u * MCU_TIMESTAMP_PIN));
}

/* Low for MCU_PORT_TIMESTAMP_HOLD_US by the cycle counter (its 32 bits wrap after 19.8 s). */
void mcu_port_timestamp_pin(void) {
  GPIO_BSRR(MCU_TIMESTAMP_GPIO) = 1u << (MCU_TIMESTAMP_PIN + 16u);
  uint32_t start = DWT_CYCCNT;
  while (DWT_CYCCNT - start < MCU_PORT_TIMESTAMP_HOLD_US * (CORE_HZ / 1000000u)) {
  }
  GPIO_BSRR(MCU_TIMESTAMP_GPIO) = 1u << MCU_TIMESTAMP_PIN;
}
#endif

void mcu_port_init(void) {
  clock_init();
  caches_init();
  console_init();
  mcu_stm32_dwt_start();
#if MCU_MLPERF_ENERGY
  timestamp_pin_init();
#endif
}

uint32_t mcu_port_cycle_hz(void) { return CORE_HZ; }

int mcu_port_getc(uint32_t timeout_ms) {
  return mcu_stm32_usart_getc(USART_BASE, (uint64_t)timeout_ms * (CORE_HZ / 1000u));
}

void mcu_port_putc(uint8_t c) { mcu_stm32_usart_putc(USART_BASE, c); }
