/* Shared by the STM32 ports on hardware (boards/common/port_stm32f7.c, nucleo-l4r5zi/port.c):
 * boards/common/port_stm32_dwt.c implements mcu_port_cycles and mcu_port_cycles_restart on the
 * DWT cycle counter (started here) and mcu_port_exit; the console's byte I/O on the USART of
 * RM0410 and RM0432 (its LPUART has the same registers) is here. The port adds its clocks, pins,
 * mcu_port_cycle_hz, mcu_port_getc and mcu_port_putc. */
#ifndef MCU_PORT_STM32_H
#define MCU_PORT_STM32_H

#include <stdint.h>

#include "mcu/port.h"

/* Enables the DWT cycle counter from 0 (its lock is the Cortex-M7's; read-as-zero, write-ignored
 * without one). */
static inline void mcu_stm32_dwt_start(void) {
  *(volatile uint32_t *)0xE000EDFCu |= 1u << 24; /* DEMCR.TRCENA */
  *(volatile uint32_t *)0xE0001FB0u = 0xC5ACCE55u; /* DWT_LAR */
  *(volatile uint32_t *)0xE0001004u = 0u; /* DWT_CYCCNT */
  *(volatile uint32_t *)0xE0001000u |= 1u; /* DWT_CTRL.CYCCNTENA */
}

#define MCU_STM32_USART(base, offset) (*(volatile uint32_t *)((base) + (offset)))

/* The USART at `base`: its next received byte (an overrun is cleared), or -1 after `timeout`
 * cycles (0: no timeout). */
static inline int mcu_stm32_usart_getc(uint32_t base, uint64_t timeout) {
  uint64_t start = mcu_port_cycles();
  while ((MCU_STM32_USART(base, 0x1Cu) & (1u << 5)) == 0u) { /* ISR.RXNE */
    if ((MCU_STM32_USART(base, 0x1Cu) & (1u << 3)) != 0u) { /* ISR.ORE */
      MCU_STM32_USART(base, 0x20u) = 1u << 3; /* ICR.ORECF */
    }
    if (timeout != 0u && mcu_port_cycles() - start > timeout) {
      return -1;
    }
  }
  return (int)(MCU_STM32_USART(base, 0x24u) & 0xFFu); /* RDR */
}

/* The USART at `base` sends `c` once its transmit register is empty. */
static inline void mcu_stm32_usart_putc(uint32_t base, uint8_t c) {
  while ((MCU_STM32_USART(base, 0x1Cu) & (1u << 7)) == 0u) { /* ISR.TXE */
  }
  MCU_STM32_USART(base, 0x28u) = c; /* TDR */
}

#endif
