/* Board-to-board links (issue 16; docs/protocol.md "Board-to-board links"): a tensor crosses a
 * link UART as DATA frames in the console protocol's framing (A5 5A | cmd | len u16 | payload |
 * crc16), stop and wait. The receiver answers each DATA frame with ACK (received, or a duplicate
 * of one it has) or NAK (bad CRC); the sender resends after a NAK, a garbled reply or a silence
 * (MCU_LINK_ACK_TIMEOUT_MS, doubling at each resend up to MCU_LINK_ACK_TIMEOUT_MAX_MS), at most
 * MCU_LINK_TRIES times per frame, and then gives up. Frames carry the host's transfer number: frames of another transfer (late resends of an
 * earlier one) are ignored, so they cannot land in the wrong tensor. Both ends count what
 * happened (frames, resends, NAKs, timeouts, CRC errors) and return a CRC-16 of the whole
 * tensor, which the host compares: a transfer is good only when both CRCs agree.
 * Built only into multi-board firmware (MCU_LINKS > 0). */
#include <stdint.h>

#include "link.h"
#include "mcu/port.h"
#include "protocol.h"

#if MCU_LINKS > 0

static void put_u16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static uint32_t get_u16(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }

static uint32_t get_u32(const uint8_t *p) { return get_u16(p) | (get_u16(p + 2) << 16); }

static void link_write_frame(uint32_t link, uint8_t cmd, const uint8_t *payload, uint32_t len) {
  uint8_t head[3] = {cmd, (uint8_t)len, (uint8_t)(len >> 8)};
  uint16_t crc = mcu_crc16(payload, len, mcu_crc16(head, 3, 0xFFFFu));
  mcu_port_link_putc(link, MCU_PROTO_SYNC0);
  mcu_port_link_putc(link, MCU_PROTO_SYNC1);
  for (uint32_t i = 0; i < 3u; ++i) {
    mcu_port_link_putc(link, head[i]);
  }
  for (uint32_t i = 0; i < len; ++i) {
    mcu_port_link_putc(link, payload[i]);
  }
  mcu_port_link_putc(link, (uint8_t)crc);
  mcu_port_link_putc(link, (uint8_t)(crc >> 8));
}

enum { FRAME_OK = 0, FRAME_TIMEOUT = -1, FRAME_BAD = -2 };

/* The next frame on `link` into buf (at most `cap` payload bytes): FRAME_OK, FRAME_TIMEOUT when
 * no sync pair came within `timeout_ms` (or a frame stalled for a byte timeout), FRAME_BAD for a
 * bad CRC or length. At most 2 x MCU_PROTO_MAX_PAYLOAD bytes of noise are skipped while hunting,
 * so a babbling line cannot hold the board forever. */
static int link_read_frame(uint32_t link, uint32_t timeout_ms, uint8_t *cmd, uint8_t *buf,
                           uint32_t cap, uint32_t *len) {
  int prev = -1;
  for (uint32_t hunted = 0;; ++hunted) {
    int c = mcu_port_link_getc(link, timeout_ms);
    if (c < 0 || hunted > 2u * MCU_PROTO_MAX_PAYLOAD) {
      return FRAME_TIMEOUT;
    }
    if (prev == MCU_PROTO_SYNC0 && c == MCU_PROTO_SYNC1) {
      break;
    }
    prev = c;
  }
  uint8_t head[3];
  uint8_t tail[2];
  for (uint32_t i = 0; i < 3u; ++i) {
    int c = mcu_port_link_getc(link, MCU_PROTO_BYTE_TIMEOUT_MS);
    if (c < 0) {
      return FRAME_TIMEOUT;
    }
    head[i] = (uint8_t)c;
  }
  *cmd = head[0];
  *len = get_u16(head + 1);
  if (*len > cap) {
    return FRAME_BAD;
  }
  for (uint32_t i = 0; i < *len + 2u; ++i) {
    int c = mcu_port_link_getc(link, MCU_PROTO_BYTE_TIMEOUT_MS);
    if (c < 0) {
      return FRAME_TIMEOUT;
    }
    if (i < *len) {
      buf[i] = (uint8_t)c;
    } else {
      tail[i - *len] = (uint8_t)c;
    }
  }
  uint16_t crc = mcu_crc16(buf, *len, mcu_crc16(head, 3, 0xFFFFu));
  return crc == (uint16_t)get_u16(tail) ? FRAME_OK : FRAME_BAD;
}

static void link_reply(uint32_t link, uint8_t cmd, uint8_t xfer, uint32_t seq) {
  uint8_t p[3] = {xfer, 0, 0};
  put_u16(p + 1, seq);
  link_write_frame(link, cmd, p, 3);
}

/* How long the sender waits for the answer to its try number `tries` (0-based). */
static uint32_t ack_wait_ms(uint32_t tries) {
  uint32_t wait = MCU_LINK_ACK_TIMEOUT_MS << tries;
  return tries > 4u || wait > MCU_LINK_ACK_TIMEOUT_MAX_MS ? MCU_LINK_ACK_TIMEOUT_MAX_MS : wait;
}

int mcu_link_send(uint32_t link, uint8_t xfer, const uint8_t *data, uint32_t bytes,
                  uint8_t *scratch, mcu_link_stats_t *st) {
  if (link >= mcu_port_links()) {
    return MCU_LINK_NO_LINK;
  }
  st->crc = mcu_crc16(data, bytes, 0xFFFFu);
  uint32_t seq = 0;
  for (uint32_t offset = 0; offset < bytes; offset += MCU_LINK_CHUNK, ++seq) {
    uint32_t n = bytes - offset < MCU_LINK_CHUNK ? bytes - offset : MCU_LINK_CHUNK;
    uint32_t tries = 0;
    for (;;) {
      scratch[0] = xfer;
      put_u16(scratch + 1, seq);
      put_u16(scratch + 3, offset);
      put_u16(scratch + 5, offset >> 16);
      for (uint32_t i = 0; i < n; ++i) {
        scratch[7 + i] = data[offset + i];
      }
      link_write_frame(link, MCU_LINK_DATA, scratch, 7u + n);
      st->frames++;
      uint8_t cmd = 0;
      uint32_t len = 0;
      int r = link_read_frame(link, ack_wait_ms(tries), &cmd, scratch, 16u, &len);
      if (r == FRAME_OK && len == 3u && scratch[0] == xfer && get_u16(scratch + 1) == seq) {
        if (cmd == MCU_LINK_ACK) {
          break;
        }
        st->naks += cmd == MCU_LINK_NAK;
      } else if (r == FRAME_TIMEOUT) {
        st->timeouts++;
      } else if (r == FRAME_BAD) {
        st->crc_errors++;
      }
      if (++tries >= MCU_LINK_TRIES) {
        return MCU_LINK_NO_ACK;
      }
      st->resends++;
    }
    st->bytes += n;
  }
  return MCU_LINK_OK;
}

int mcu_link_recv(uint32_t link, uint8_t xfer, uint8_t *dst, uint32_t bytes, uint32_t timeout_ms,
                  uint8_t *scratch, mcu_link_stats_t *st) {
  if (link >= mcu_port_links()) {
    return MCU_LINK_NO_LINK;
  }
  uint32_t seq = 0;
  while (st->bytes < bytes) {
    uint8_t cmd = 0;
    uint32_t len = 0;
    /* the first frame may wait for the host to start the sender; later ones for its resends */
    uint32_t wait = seq == 0u ? timeout_ms : MCU_LINK_SENDER_QUIET_MS;
    int r = link_read_frame(link, wait, &cmd, scratch, MCU_LINK_CHUNK + 7u, &len);
    if (r == FRAME_TIMEOUT) {
      st->timeouts++;
      return MCU_LINK_TIMEOUT;
    }
    if (r == FRAME_BAD) {
      st->crc_errors++;
      link_reply(link, MCU_LINK_NAK, xfer, seq);
      continue;
    }
    if (cmd != MCU_LINK_DATA || len < 7u || scratch[0] != xfer) {
      st->ignored++;
      continue;
    }
    st->frames++;
    uint32_t got = get_u16(scratch + 1);
    uint32_t n = len - 7u;
    if (got == seq && get_u32(scratch + 3) == st->bytes && n <= bytes - st->bytes) {
      for (uint32_t i = 0; i < n; ++i) {
        dst[st->bytes + i] = scratch[7 + i];
      }
      st->bytes += n;
      link_reply(link, MCU_LINK_ACK, xfer, seq++);
    } else if (got < seq) {
      st->resends++; /* our ACK was lost: the sender repeats a frame we have */
      link_reply(link, MCU_LINK_ACK, xfer, got);
    } else {
      st->ignored++;
    }
  }
  st->crc = mcu_crc16(dst, bytes, 0xFFFFu);
  return MCU_LINK_OK;
}

#endif
