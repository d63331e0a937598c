/* What a board provides to the firmware: console bytes, a cycle counter, exit, and optionally a
 * store for checkpoints and a timestamp pin. Nothing else. */
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

/* Checkpoint storage (mcu/checkpoint.h), optional: two slots (0 and 1) of mcu_port_store_bytes()
 * bytes each, 0 when the board has none (the runtime's weak default). Erase makes a slot read as
 * empty (flash: the sector's 0xFF bytes); writes go to erased bytes only. Each returns 0 on
 * success. Under QEMU the slots are semihosting files (boards/common/store_semihost.c); the
 * NUCLEO-F767ZI keeps them in two internal flash sectors. */
uint32_t mcu_port_store_bytes(void);
int mcu_port_store_erase(uint32_t slot);
int mcu_port_store_read(uint32_t slot, uint32_t offset, void *dst, uint32_t bytes);
int mcu_port_store_write(uint32_t slot, uint32_t offset, const void *src, uint32_t bytes);

/* MLPerf Tiny energy mode's timestamp, optional: only energy builds (MCU_MLPERF_ENERGY, which
 * also sets MCU_CONSOLE_BAUD to 9600) call it, and only ports of boards whose board.toml names a
 * `timestamp_pin` define it; their mcu_port_init() then sets the pin up idle high. It drives the
 * pin low, holds it there at least MCU_PORT_TIMESTAMP_HOLD_US, then drives it high again: the
 * falling edge is the timestamp the power monitor records (X-NUCLEO-LPM01A input D7, or a logic
 * input of a Nordic PPK2, which samples at 100 kHz, hence 20 us rather than EEMBC's minimum of
 * 1 us). */
#define MCU_PORT_TIMESTAMP_HOLD_US 20u
void mcu_port_timestamp_pin(void);

/* Board-to-board link UARTs (issue 16), optional: only multi-board builds (MCU_LINKS > 0) call
 * them, and only ports of boards whose board.toml gives `link_uarts` define them. Links are
 * numbered from 0; a board has mcu_port_links() of them. getc returns -1 when no byte arrived
 * within `timeout_ms` (0 = forever). */
uint32_t mcu_port_links(void);
int mcu_port_link_getc(uint32_t link, uint32_t timeout_ms);
void mcu_port_link_putc(uint32_t link, uint8_t c);

#endif
