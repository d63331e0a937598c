/* Board-to-board links (link.c; docs/protocol.md "Board-to-board links"). */
#ifndef MCU_APP_LINK_H
#define MCU_APP_LINK_H

#include <stdint.h>

#ifndef MCU_LINKS
#define MCU_LINKS 0
#endif

/* Data bytes per DATA frame: 256 + 7 bytes of header fit the protocol's receive buffer. */
#define MCU_LINK_CHUNK 256u
/* The sender's first wait for an acknowledgement; each resend waits twice as long as the one
 * before, up to MCU_LINK_ACK_TIMEOUT_MAX_MS, so a receiver that is slow for a while (a busy
 * board, a twin starved of host CPU) is waited for while one lost frame costs only 50 ms. */
#define MCU_LINK_ACK_TIMEOUT_MS 50u
#define MCU_LINK_ACK_TIMEOUT_MAX_MS 400u
#define MCU_LINK_TRIES 8u
/* The receiver's wait between frames: longer than all of a sender's tries on one frame
 * (50 + 100 + 200 + 5 x 400 = 2,350 ms) plus one first wait. */
#define MCU_LINK_SENDER_QUIET_MS 2400u

enum { MCU_LINK_DATA = 0x20, MCU_LINK_ACK = 0x21, MCU_LINK_NAK = 0x22 };

enum {
  MCU_LINK_OK = 0,
  MCU_LINK_NO_LINK = 1, /* the board has no such link UART */
  MCU_LINK_BAD_TENSOR = 2,
  MCU_LINK_NO_ACK = 3,  /* sender: a frame went unacknowledged MCU_LINK_TRIES times */
  MCU_LINK_TIMEOUT = 4  /* receiver: the sender went quiet */
};

typedef struct {
  uint32_t bytes;   /* tensor bytes sent (acknowledged) or received */
  uint16_t frames;  /* DATA frames sent, or accepted */
  uint16_t resends; /* sender: frames sent again; receiver: duplicates acknowledged again */
  uint16_t naks;    /* sender: NAKs received */
  uint16_t timeouts;
  uint16_t crc_errors;
  uint16_t ignored; /* receiver: frames of another transfer, out of order or not DATA */
  uint16_t crc;     /* CRC-16 of the whole tensor */
} mcu_link_stats_t;

int mcu_link_send(uint32_t link, uint8_t xfer, const uint8_t *data, uint32_t bytes,
                  uint8_t *scratch, mcu_link_stats_t *st);
int mcu_link_recv(uint32_t link, uint8_t xfer, uint8_t *dst, uint32_t bytes, uint32_t timeout_ms,
                  uint8_t *scratch, mcu_link_stats_t *st);

#endif
