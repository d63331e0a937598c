/* mcugen's device protocol: binary frames for the host tool, plus the MLPerf Tiny runner's text
 * commands on the same console. See docs/protocol.md for the wire format. */
#ifndef MCU_APP_PROTOCOL_H
#define MCU_APP_PROTOCOL_H

#include <stdint.h>

#define MCU_PROTO_VERSION 1u
#define MCU_PROTO_SYNC0 0xA5u
#define MCU_PROTO_SYNC1 0x5Au
#define MCU_PROTO_MAX_PAYLOAD 512u
#define MCU_PROTO_BYTE_TIMEOUT_MS 200u

/* Firmware of a multi-board run (mcugen run --boards): INVOKE takes an operator range, so that a
 * board runs its program phase by phase (docs/protocol.md). */
#ifndef MCU_MULTIBOARD
#define MCU_MULTIBOARD 0
#endif

enum {
  MCU_CMD_INFO = 0x01,
  MCU_CMD_WRITE_INPUT = 0x02,
  MCU_CMD_INVOKE = 0x03,
  MCU_CMD_READ_OUTPUT = 0x04,
  MCU_CMD_PROFILE = 0x05,
  MCU_CMD_EXIT = 0x07,
  MCU_CMD_READ_STATE = 0x08,
  MCU_CMD_WRITE_STATE = 0x09,
  MCU_CMD_CHECKPOINT = 0x0A,
  MCU_CMD_LINK_SEND = 0x0B, /* multi-board firmware only (MCU_LINKS > 0): link.c */
  MCU_CMD_LINK_RECV = 0x0C,
  MCU_REPLY_FLAG = 0x80,
  MCU_REPLY_ERROR = 0x7F
};

enum {
  MCU_PERR_CRC = 0x10,
  MCU_PERR_UNKNOWN = 0x11,
  MCU_PERR_LENGTH = 0x12,
  MCU_PERR_RANGE = 0x13,
  MCU_PERR_TIMEOUT = 0x14,
  MCU_PERR_INVOKE = 0x15
};

uint16_t mcu_crc16(const uint8_t *data, uint32_t len, uint16_t crc);

/* Handle one binary frame whose two sync bytes were already read. */
void mcu_proto_handle_frame(void);
/* Feed one text byte to the MLPerf Tiny command parser. */
void mcu_mlperf_feed(uint8_t c);
void mcu_mlperf_boot_banner(void);

/* Shared by both protocols (firmware.c). */
int mcu_app_invoke(uint32_t count, uint64_t *ticks, int profile);
int mcu_app_invoke_nodes(uint32_t count, uint64_t *ticks, int profile, uint32_t first,
                         uint32_t end);
uint8_t *mcu_app_io_ptr(int is_output, uint32_t index, uint32_t *bytes);
void mcu_app_puts(const char *s);

#endif
