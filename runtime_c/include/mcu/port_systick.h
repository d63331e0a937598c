/* Shared by the ports whose cycle counter is SysTick and whose exit is semihosting (the QEMU
 * machines): boards/common/systick_semihost.c implements mcu_port_cycles, mcu_port_cycle_hz,
 * mcu_port_cycles_restart, mcu_port_exit and SysTick_Handler; the port adds its console. */
#ifndef MCU_PORT_SYSTICK_H
#define MCU_PORT_SYSTICK_H

#include <stdint.h>

/* The core clock, which the counter counts: a compile definition of the board. */
#ifndef MCU_CLOCK_HZ
#error "MCU_CLOCK_HZ must be defined by the board"
#endif

/* Start SysTick at the core clock with the wrap interrupt. */
void mcu_systick_start(void);

/* About 260 instructions of pause between two polls of the console. */
void mcu_systick_pause(void);

/* A console wait: polls until a bit of `mask` is set in the register at `status`, pausing
 * (mcu_systick_pause) between polls and summing the counter's steps; needs no interrupt.
 * 0 once a bit is set, -1 after `timeout_ms` (0: no timeout). */
int mcu_systick_wait_bits(const volatile uint32_t *status, uint32_t mask, uint32_t timeout_ms);

#endif
