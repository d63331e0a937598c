/* Shared by the ports whose cycle counter is SysTick and whose exit is semihosting (the QEMU
 * machines): boards/common/systick_semihost.c implements mcu_port_cycles, mcu_port_cycle_hz,
 * mcu_port_cycles_restart, mcu_port_exit and SysTick_Handler; the port adds its console. */
#ifndef MCU_PORT_SYSTICK_H
#define MCU_PORT_SYSTICK_H

#include <stdint.h>

/* Start SysTick at the core clock with the wrap interrupt. */
void mcu_systick_start(void);

/* About 260 instructions of pause between two polls of the console. */
void mcu_systick_pause(void);

/* A console-polling wait: pauses (mcu_systick_pause), then adds the counter's steps since
 * *last to *waited. Returns 1 once *waited exceeds `limit` ticks. Needs no interrupt. */
int mcu_systick_wait_step(uint32_t *last, uint64_t *waited, uint64_t limit);

/* The counter's raw value, to start a wait. */
uint32_t mcu_systick_now(void);

#endif
