/* Binary frames: SYNC0 SYNC1 | cmd u8 | len u16le | payload | crc16 u16le (CRC-16/CCITT-FALSE over
 * cmd, len and payload). Replies use cmd | 0x80, or 0x7F with {code u8, text} on error. Every
 * malformed frame gets exactly one error reply; a stalled frame times out after
 * MCU_PROTO_BYTE_TIMEOUT_MS without a byte, and the parser then hunts for the next sync pair. */
#include <stdint.h>

#include "model.h"
#include "mcu/checkpoint.h"
#include "mcu/port.h"
#include "protocol.h"
#include "link.h"

extern const uint64_t *mcu_app_node_ticks(void);
extern int32_t mcu_app_failed_node(void);
extern uint32_t mcu_app_stack_used(void);
extern uint32_t mcu_app_moved_bytes(void);
extern uint32_t mcu_app_stack_size(void);

static uint8_t g_rx[MCU_PROTO_MAX_PAYLOAD];
static uint8_t g_tx[MCU_PROTO_MAX_PAYLOAD];

uint16_t mcu_crc16(const uint8_t *data, uint32_t len, uint16_t crc) {
  for (uint32_t i = 0; i < len; ++i) {
    crc ^= (uint16_t)((uint16_t)data[i] << 8);
    for (int b = 0; b < 8; ++b) {
      crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
  }
  return crc;
}

static void put_u16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v) {
  put_u16(p, v);
  put_u16(p + 2, v >> 16);
}

static void put_u64(uint8_t *p, uint64_t v) {
  put_u32(p, (uint32_t)v);
  put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get_u16(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }
static uint32_t get_u32(const uint8_t *p) { return get_u16(p) | (get_u16(p + 2) << 16); }

static void send_frame(uint8_t cmd, const uint8_t *payload, uint32_t len) {
  uint8_t head[3] = {cmd, (uint8_t)len, (uint8_t)(len >> 8)};
  uint16_t crc = mcu_crc16(payload, len, mcu_crc16(head, 3, 0xFFFFu));
  mcu_port_putc(MCU_PROTO_SYNC0);
  mcu_port_putc(MCU_PROTO_SYNC1);
  for (int i = 0; i < 3; ++i) {
    mcu_port_putc(head[i]);
  }
  for (uint32_t i = 0; i < len; ++i) {
    mcu_port_putc(payload[i]);
  }
  mcu_port_putc((uint8_t)crc);
  mcu_port_putc((uint8_t)(crc >> 8));
}

static void send_error(uint8_t code, const char *text) {
  uint32_t n = 1;
  g_tx[0] = code;
  for (uint32_t i = 0; text[i] != '\0' && n < 64u; ++i) {
    g_tx[n++] = (uint8_t)text[i];
  }
  send_frame(MCU_REPLY_ERROR, g_tx, n);
}

static int read_bytes(uint8_t *dst, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    int c = mcu_port_getc(MCU_PROTO_BYTE_TIMEOUT_MS);
    if (c < 0) {
      return -1;
    }
    if (dst != 0) {
      dst[i] = (uint8_t)c;
    }
  }
  return 0;
}

/* Skip the rest of a frame that is too long to buffer: at most `count` bytes, fewer if the line
 * goes quiet for one byte timeout first. The reply then follows the frame, not its middle. */
static void skip_bytes(uint32_t count) {
  for (uint32_t i = 0; i < count && mcu_port_getc(MCU_PROTO_BYTE_TIMEOUT_MS) >= 0; ++i) {
  }
}

static void cmd_info(void) {
  uint32_t n = 0;
  g_tx[n++] = MCU_PROTO_VERSION;
  g_tx[n++] = (uint8_t)mcu_model.num_inputs;
  g_tx[n++] = (uint8_t)mcu_model.num_outputs;
  g_tx[n++] = 0;
  put_u32(g_tx + n, mcu_model.arena_bytes);
  put_u32(g_tx + n + 4, MCU_PROTO_MAX_PAYLOAD);
  put_u32(g_tx + n + 8, mcu_port_cycle_hz());
  put_u32(g_tx + n + 12, mcu_app_stack_size());
  put_u32(g_tx + n + 16, mcu_model.num_nodes);
  n += 20;
  for (uint32_t i = 0; i < 8; ++i) {
    g_tx[n++] = mcu_model_sha256[i];
  }
  for (uint32_t k = 0; k < 2; ++k) {
    uint32_t count = k ? mcu_model.num_outputs : mcu_model.num_inputs;
    for (uint32_t i = 0; i < count && n + 4 <= MCU_PROTO_MAX_PAYLOAD; ++i) {
      uint32_t bytes = 0;
      (void)mcu_app_io_ptr((int)k, i, &bytes);
      put_u32(g_tx + n, bytes);
      n += 4;
    }
  }
  send_frame(MCU_CMD_INFO | MCU_REPLY_FLAG, g_tx, n);
}

/* payload: index u8, offset u32, data */
static void cmd_write_input(uint32_t len) {
  if (len < 5) {
    send_error(MCU_PERR_LENGTH, "write wants index u8, offset u32, data");
    return;
  }
  uint32_t bytes = 0;
  uint8_t *dst = mcu_app_io_ptr(0, g_rx[0], &bytes);
  uint32_t offset = get_u32(g_rx + 1);
  uint32_t count = len - 5;
  if (dst == 0 || offset > bytes || count > bytes - offset) {
    send_error(MCU_PERR_RANGE, "input index or range out of bounds");
    return;
  }
  for (uint32_t i = 0; i < count; ++i) {
    dst[offset + i] = g_rx[5 + i];
  }
  send_frame(MCU_CMD_WRITE_INPUT | MCU_REPLY_FLAG, 0, 0);
}

/* Variable tensor `index` (the model's state: a training graph's weights and optimiser state). */
static uint8_t *state_ptr(uint32_t index, uint32_t *bytes) {
#if MCU_MODEL_NUM_VARIABLES > 0
  if (index < mcu_model.num_variables) {
    *bytes = mcu_model.variables[index].bytes;
    return (uint8_t *)mcu_model.variables[index].data;
  }
#else
  (void)index, (void)bytes; /* a stateless model: every request is out of range */
#endif
  return 0;
}

/* payload: variable u16, offset u32, count u16 */
static void cmd_read_state(uint32_t len) {
  if (len != 8) {
    send_error(MCU_PERR_LENGTH, "read state wants variable u16, offset u32, count u16");
    return;
  }
  uint32_t bytes = 0;
  const uint8_t *src = state_ptr(get_u16(g_rx), &bytes);
  uint32_t offset = get_u32(g_rx + 2);
  uint32_t count = get_u16(g_rx + 6);
  if (src == 0 || offset > bytes || count > bytes - offset || count > MCU_PROTO_MAX_PAYLOAD) {
    send_error(MCU_PERR_RANGE, "variable index or range out of bounds");
    return;
  }
  send_frame(MCU_CMD_READ_STATE | MCU_REPLY_FLAG, src + offset, count);
}

/* payload: variable u16, offset u32, data (at most 506 bytes) */
static void cmd_write_state(uint32_t len) {
  if (len < 6) {
    send_error(MCU_PERR_LENGTH, "write state wants variable u16, offset u32, data");
    return;
  }
  uint32_t bytes = 0;
  uint8_t *dst = state_ptr(get_u16(g_rx), &bytes);
  uint32_t offset = get_u32(g_rx + 2);
  uint32_t count = len - 6;
  if (dst == 0 || offset > bytes || count > bytes - offset) {
    send_error(MCU_PERR_RANGE, "variable index or range out of bounds");
    return;
  }
  for (uint32_t i = 0; i < count; ++i) {
    dst[offset + i] = g_rx[6 + i];
  }
  send_frame(MCU_CMD_WRITE_STATE | MCU_REPLY_FLAG, 0, 0);
}

/* payload: op u8 (0 save, 1 load) -> status u8 (mcu_ckpt_status_t), sequence u32 */
static void cmd_checkpoint(uint32_t len) {
  if (len != 1 || g_rx[0] > 1) {
    send_error(MCU_PERR_LENGTH, "checkpoint wants op u8: 0 save, 1 load");
    return;
  }
  uint32_t sequence = 0;
  mcu_ckpt_status_t status = MCU_CKPT_NO_STATE;
#if MCU_MODEL_NUM_VARIABLES > 0
  const uint32_t tag = (uint32_t)mcu_model_sha256[0] | ((uint32_t)mcu_model_sha256[1] << 8) |
                       ((uint32_t)mcu_model_sha256[2] << 16) | ((uint32_t)mcu_model_sha256[3] << 24);
  status = g_rx[0] == 0 ? mcu_checkpoint_save(&mcu_model, tag, &sequence)
                        : mcu_checkpoint_load(&mcu_model, tag, &sequence);
#endif
  g_tx[0] = (uint8_t)status;
  put_u32(g_tx + 1, sequence);
  send_frame(MCU_CMD_CHECKPOINT | MCU_REPLY_FLAG, g_tx, 5);
}

/* payload: index u8, offset u32, count u16 */
static void cmd_read_output(uint32_t len) {
  if (len != 7) {
    send_error(MCU_PERR_LENGTH, "read wants index u8, offset u32, count u16");
    return;
  }
  uint32_t bytes = 0;
  uint8_t *src = mcu_app_io_ptr(1, g_rx[0], &bytes);
  uint32_t offset = get_u32(g_rx + 1);
  uint32_t count = get_u16(g_rx + 5);
  if (src == 0 || offset > bytes || count > bytes - offset || count > MCU_PROTO_MAX_PAYLOAD) {
    send_error(MCU_PERR_RANGE, "output index or range out of bounds");
    return;
  }
  send_frame(MCU_CMD_READ_OUTPUT | MCU_REPLY_FLAG, src + offset, count);
}

/* payload: count u16, profile u8 [, first node u16, end node u16: multi-board firmware only]
 * -> status u8, pad u8, failed node i16, ticks u64, stack u32, moved u32 (bytes a dynamic
 * allocator moved or paged in the last inference) */
static void cmd_invoke(uint32_t len) {
#if MCU_MULTIBOARD
  if ((len != 3 && len != 7) || get_u16(g_rx) == 0) {
    send_error(MCU_PERR_LENGTH, "invoke wants count u16 >= 1, profile u8 [, first u16, end u16]");
    return;
  }
  uint32_t first = len == 7 ? get_u16(g_rx + 3) : 0u;
  uint32_t end = len == 7 ? get_u16(g_rx + 5) : MCU_MODEL_NUM_NODES;
  if (first >= end || end > MCU_MODEL_NUM_NODES) {
    send_error(MCU_PERR_RANGE, "invoke's operator range out of bounds");
    return;
  }
  uint64_t ticks = 0;
  int status = mcu_app_invoke_nodes(get_u16(g_rx), &ticks, g_rx[2] != 0, first, end);
#else
  if (len != 3 || get_u16(g_rx) == 0) {
    send_error(MCU_PERR_LENGTH, "invoke wants count u16 >= 1 and profile u8");
    return;
  }
  uint64_t ticks = 0;
  int status = mcu_app_invoke(get_u16(g_rx), &ticks, g_rx[2] != 0);
#endif
  g_tx[0] = (uint8_t)status;
  g_tx[1] = 0;
  put_u16(g_tx + 2, (uint32_t)(status == 0 ? -1 : mcu_app_failed_node()));
  put_u64(g_tx + 4, ticks);
  put_u32(g_tx + 12, mcu_app_stack_used());
  put_u32(g_tx + 16, mcu_app_moved_bytes());
  send_frame(MCU_CMD_INVOKE | MCU_REPLY_FLAG, g_tx, 20);
}

/* payload: first node u16, count u16 -> count x ticks u64 of the last profiled invoke */
static void cmd_profile(uint32_t len) {
  if (len != 4) {
    send_error(MCU_PERR_LENGTH, "profile wants first node u16, count u16");
    return;
  }
  uint32_t first = get_u16(g_rx);
  uint32_t count = get_u16(g_rx + 2);
  if (first > MCU_MODEL_NUM_NODES || count > MCU_MODEL_NUM_NODES - first ||
      count * 8u > MCU_PROTO_MAX_PAYLOAD) {
    send_error(MCU_PERR_RANGE, "profile range out of bounds");
    return;
  }
  const uint64_t *ticks = mcu_app_node_ticks();
  for (uint32_t i = 0; i < count; ++i) {
    put_u64(g_tx + 8 * i, ticks[first + i]);
  }
  send_frame(MCU_CMD_PROFILE | MCU_REPLY_FLAG, g_tx, 8 * count);
}

#if MCU_LINKS > 0
static void send_link_reply(uint8_t cmd, int status, const mcu_link_stats_t *st) {
  g_tx[0] = (uint8_t)status;
  g_tx[1] = 0;
  put_u32(g_tx + 2, st->bytes);
  const uint16_t counts[7] = {st->frames,     st->resends, st->naks, st->timeouts,
                              st->crc_errors, st->ignored, st->crc};
  for (uint32_t i = 0; i < 7u; ++i) {
    put_u16(g_tx + 6 + 2 * i, counts[i]);
  }
  send_frame(cmd | MCU_REPLY_FLAG, g_tx, 20);
}

/* payload: link u8, is_output u8, index u8, transfer u8 -> status u8, pad u8, link stats */
static void cmd_link_send(uint32_t len) {
  mcu_link_stats_t st = {0};
  uint32_t bytes = 0;
  const uint8_t *src = len == 4 ? mcu_app_io_ptr(g_rx[1] != 0, g_rx[2], &bytes) : 0;
  int status = src == 0 ? MCU_LINK_BAD_TENSOR
                        : mcu_link_send(g_rx[0], g_rx[3], src, bytes, g_rx, &st);
  send_link_reply(MCU_CMD_LINK_SEND, status, &st);
}

/* payload: link u8, input index u8, transfer u8, pad u8, first-frame timeout ms u32 */
static void cmd_link_recv(uint32_t len) {
  mcu_link_stats_t st = {0};
  uint32_t bytes = 0;
  uint8_t *dst = len == 8 ? mcu_app_io_ptr(0, g_rx[1], &bytes) : 0;
  int status = dst == 0 ? MCU_LINK_BAD_TENSOR
                        : mcu_link_recv(g_rx[0], g_rx[2], dst, bytes, get_u32(g_rx + 4), g_rx, &st);
  send_link_reply(MCU_CMD_LINK_RECV, status, &st);
}
#endif

static void dispatch(uint8_t cmd, uint32_t len) {
  switch (cmd) {
    case MCU_CMD_INFO:
      cmd_info();
      break;
    case MCU_CMD_WRITE_INPUT:
      cmd_write_input(len);
      break;
    case MCU_CMD_INVOKE:
      cmd_invoke(len);
      break;
    case MCU_CMD_READ_OUTPUT:
      cmd_read_output(len);
      break;
    case MCU_CMD_PROFILE:
      cmd_profile(len);
      break;
    case MCU_CMD_READ_STATE:
      cmd_read_state(len);
      break;
    case MCU_CMD_WRITE_STATE:
      cmd_write_state(len);
      break;
    case MCU_CMD_CHECKPOINT:
      cmd_checkpoint(len);
      break;
#if MCU_LINKS > 0
    case MCU_CMD_LINK_SEND:
      cmd_link_send(len);
      break;
    case MCU_CMD_LINK_RECV:
      cmd_link_recv(len);
      break;
#endif
    case MCU_CMD_EXIT:
      send_frame(MCU_CMD_EXIT | MCU_REPLY_FLAG, 0, 0);
      mcu_port_exit(len >= 1 ? g_rx[0] : 0);
    default:
      send_error(MCU_PERR_UNKNOWN, "unknown command");
      break;
  }
}

void mcu_proto_handle_frame(void) {
  uint8_t head[3];
  uint8_t crc_bytes[2];
  if (read_bytes(head, 3) != 0) {
    send_error(MCU_PERR_TIMEOUT, "timeout in frame header");
    return;
  }
  uint32_t len = get_u16(head + 1);
  if (len > MCU_PROTO_MAX_PAYLOAD) {
    skip_bytes(len + 2u);
    send_error(MCU_PERR_LENGTH, "payload longer than the maximum");
    return;
  }
  if (read_bytes(g_rx, len) != 0 || read_bytes(crc_bytes, 2) != 0) {
    send_error(MCU_PERR_TIMEOUT, "timeout in frame payload");
    return;
  }
  uint16_t crc = mcu_crc16(g_rx, len, mcu_crc16(head, 3, 0xFFFFu));
  if (crc != (uint16_t)get_u16(crc_bytes)) {
    send_error(MCU_PERR_CRC, "bad crc");
    return;
  }
  dispatch(head[0], len);
}
