/* What a board provides to the firmware: console bytes, a cycle counter, exit. Nothing else. */
#ifndef MCU_PORT_H
#define MCU_PORT_H

#include <stdint.h>

void mcu_port_init(void);
/* Blocking read of one console byte; returns -1 if none arrived within `timeout_ms` (0 = forever). */
int mcu_port_getc(uint32_t timeout_ms);
void mcu_port_putc(uint8_t c);
/* Free-running 64-bit count of `mcu_port_cycle_hz()` ticks. */
uint64_t mcu_port_cycles(void);
uint32_t mcu_port_cycle_hz(void);
/* Restart the counter at zero, so that measured intervals do not depend on the counter's phase
 * (under QEMU -icount this makes instruction counts repeat exactly). */
void mcu_port_cycles_restart(void);
/* Leave: under an emulator, exit with `code`; on a board, stop. */
void mcu_port_exit(int code) __attribute__((noreturn));

#endif
