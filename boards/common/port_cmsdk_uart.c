/* Port for Arm MPS2/MPS3 FPGA images (and their QEMU models): CMSDK APB UART console; the cycle
 * counter and exit come from systick_semihost.c. Base address and clock are the board's
 * compile definitions. */
#include <stdint.h>

#include "mcu/port.h"
#include "mcu/port_systick.h"

#ifndef MCU_UART_BASE
#error "MCU_UART_BASE must be defined by the board"
#endif
#ifndef MCU_CLOCK_HZ
#error "MCU_CLOCK_HZ must be defined by the board"
#endif

#define UART_DATA (*(volatile uint32_t *)(MCU_UART_BASE + 0x0u))
#define UART_STATE (*(volatile uint32_t *)(MCU_UART_BASE + 0x4u))
#define UART_CTRL (*(volatile uint32_t *)(MCU_UART_BASE + 0x8u))
#define UART_BAUDDIV (*(volatile uint32_t *)(MCU_UART_BASE + 0x10u))

void mcu_port_init(void) {
  UART_BAUDDIV = 16u;
  UART_CTRL = 3u; /* TX and RX enabled */
  mcu_systick_start();
}

int mcu_port_getc(uint32_t timeout_ms) {
  uint64_t limit = (uint64_t)timeout_ms * (MCU_CLOCK_HZ / 1000u);
  uint64_t waited = 0u;
  uint32_t last = mcu_systick_now();
  while ((UART_STATE & 2u) == 0u) {
    if (timeout_ms == 0u) {
      mcu_systick_pause();
    } else if (mcu_systick_wait_step(&last, &waited, limit)) {
      return -1;
    }
  }
  return (int)(UART_DATA & 0xFFu);
}

void mcu_port_putc(uint8_t c) {
  while ((UART_STATE & 1u) != 0u) {
  }
  UART_DATA = c;
}
