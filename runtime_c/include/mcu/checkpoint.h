/* Checkpoints of the model state (the variable tensors: a training graph's weights, gradient sums
 * and momentum) in the board's storage, through the port's store hooks (mcu/port.h).
 *
 * Two slots; each holds a 32-byte header (magic, version, sequence number, state bytes, a tag of
 * the model, CRC-32 of the data, CRC-32 of the header) and the state after it. A save goes to the
 * slot that does not hold the newest valid checkpoint: it erases the slot, writes the state, and
 * writes the header last, so a reset at any point leaves the other slot's checkpoint intact and
 * this one invalid (no header, or a CRC that does not match). A load checks both slots' CRCs
 * before it copies anything and takes the newest valid one. */
#ifndef MCU_CHECKPOINT_H
#define MCU_CHECKPOINT_H

#include "mcu/runtime.h"

typedef enum {
  MCU_CKPT_OK = 0,
  MCU_CKPT_NO_STORAGE = 1, /* the port has no store, or it is too small for the state */
  MCU_CKPT_NO_STATE = 2,   /* the model has no variable tensors */
  MCU_CKPT_IO = 3,         /* the store failed to read, erase or write */
  MCU_CKPT_NONE_VALID = 4  /* load: neither slot holds a valid checkpoint of this model */
} mcu_ckpt_status_t;

#define MCU_CKPT_HEADER_BYTES 32u

/* Saves the variables; *sequence gets the new checkpoint's number (1 for the first). */
mcu_ckpt_status_t mcu_checkpoint_save(const mcu_model_t *model, uint32_t tag, uint32_t *sequence);
/* Loads the newest valid checkpoint into the variables; *sequence gets its number. */
mcu_ckpt_status_t mcu_checkpoint_load(const mcu_model_t *model, uint32_t tag, uint32_t *sequence);
/* CRC-32 (IEEE 802.3, reflected, initial and final XOR 0xFFFFFFFF) of `n` bytes after `crc`:
 * start with 0. */
uint32_t mcu_crc32(uint32_t crc, const void *data, uint32_t n);

#endif
