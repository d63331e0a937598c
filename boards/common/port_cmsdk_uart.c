/* Port for Arm MPS2/MPS3 FPGA images (and their QEMU models): CMSDK APB UART console; the cycle
 * counter and exit come from systick_semihost.c. Base address and clock are the board's
 * compile definitions.
 *
 * MLPerf Tiny energy mode's timestamp pin (energy builds, boards that define MCU_FPGAIO_BASE and
 * MCU_TIMER_BASE): bit 0 of the FPGA's LED register (FPGAIO LED0, user LED 0), idle 1, a
 * timestamp 0 for MCU_PORT_TIMESTAMP_HOLD_US. The hold is timed with a CMSDK APB timer left
 * free-running at the core clock, read right after the falling edge: QEMU's `-trace
 * mps2_fpgaio_write -trace cmsdk_apb_timer_read` then shows each edge and the virtual time it
 * happened at (tests/qemu/test_mlperf_energy.py). The baud rate (MCU_CONSOLE_BAUD) is not used:
 * QEMU's CMSDK UART model does not pace bytes by it. */
#include <stdint.h>

#include "mcu/port.h"
#include "mcu/port_systick.h"

#ifndef MCU_UART_BASE
#error "MCU_UART_BASE must be defined by the board"
#endif

#define UART_DATA (*(volatile uint32_t *)(MCU_UART_BASE + 0x0u))
#define UART_STATE (*(volatile uint32_t *)(MCU_UART_BASE + 0x4u))
#define UART_CTRL (*(volatile uint32_t *)(MCU_UART_BASE + 0x8u))
#define UART_BAUDDIV (*(volatile uint32_t *)(MCU_UART_BASE + 0x10u))

#if MCU_MLPERF_ENERGY
#if !defined(MCU_FPGAIO_BASE) || !defined(MCU_TIMER_BASE)
#error "energy mode needs the board's timestamp pin: MCU_FPGAIO_BASE and MCU_TIMER_BASE"
#endif
#define FPGAIO_LED0 (*(volatile uint32_t *)(MCU_FPGAIO_BASE + 0x0u))
#define TIMER_CTRL (*(volatile uint32_t *)(MCU_TIMER_BASE + 0x0u))
#define TIMER_VALUE (*(volatile uint32_t *)(MCU_TIMER_BASE + 0x4u))
#define TIMER_RELOAD (*(volatile uint32_t *)(MCU_TIMER_BASE + 0x8u))

static void timestamp_pin_init(void) {
  FPGAIO_LED0 = 1u;
  TIMER_RELOAD = 0xFFFFFFFFu;
  TIMER_VALUE = 0xFFFFFFFFu;
  TIMER_CTRL = 1u; /* enabled, no interrupt: a down-counter that wraps after 171 s at 25 MHz */
}

void mcu_port_timestamp_pin(void) {
  FPGAIO_LED0 = 0u;
  uint32_t start = TIMER_VALUE;
  while (start - TIMER_VALUE < MCU_PORT_TIMESTAMP_HOLD_US * (MCU_CLOCK_HZ / 1000000u)) {
    mcu_systick_pause(); /* fewer register reads: each costs QEMU far more than an instruction */
  }
  FPGAIO_LED0 = 1u;
}
#endif

#if MCU_LINKS > 0
/* Link k is CMSDK UART MCU_LINK_UART<k+1>: the board's [defines] give their bases. */
#define LINK_REG(link, offset) (*(volatile uint32_t *)(g_link_base[link] + (offset)))
static const uint32_t g_link_base[] = {MCU_LINK_UART1, MCU_LINK_UART2, MCU_LINK_UART3,
                                       MCU_LINK_UART4};

uint32_t mcu_port_links(void) { return (uint32_t)(sizeof g_link_base / sizeof g_link_base[0]); }

int mcu_port_link_getc(uint32_t link, uint32_t timeout_ms) {
  if (mcu_systick_wait_bits(&LINK_REG(link, 0x4u), 2u, timeout_ms) != 0) {
    return -1;
  }
  return (int)(LINK_REG(link, 0x0u) & 0xFFu);
}

void mcu_port_link_putc(uint32_t link, uint8_t c) {
  while ((LINK_REG(link, 0x4u) & 1u) != 0u) {
  }
  LINK_REG(link, 0x0u) = c;
}
#endif

void mcu_port_init(void) {
  UART_BAUDDIV = 16u;
  UART_CTRL = 3u; /* TX and RX enabled */
#if MCU_LINKS > 0
  for (uint32_t k = 0; k < mcu_port_links(); ++k) {
    LINK_REG(k, 0x10u) = 16u;
    LINK_REG(k, 0x8u) = 3u;
  }
#endif
  mcu_systick_start();
#if MCU_MLPERF_ENERGY
  timestamp_pin_init();
#endif
}

int mcu_port_getc(uint32_t timeout_ms) {
  if (mcu_systick_wait_bits(&UART_STATE, 2u, timeout_ms) != 0) {
    return -1;
  }
  return (int)(UART_DATA & 0xFFu);
}

void mcu_port_putc(uint8_t c) {
  while ((UART_STATE & 1u) != 0u) {
  }
  UART_DATA = c;
}
