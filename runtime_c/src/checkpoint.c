/* Two-slot checkpoints of the model state (mcu/checkpoint.h). */
#include "mcu/checkpoint.h"

#include <stddef.h>

#include "mcu/port.h"

#define CKPT_MAGIC 0x504B434Du /* "MCKP" */
#define CKPT_VERSION 1u
#define CKPT_CHUNK 64u

typedef struct {
  uint32_t magic, version, sequence, bytes, tag, data_crc, reserved, header_crc;
} ckpt_header_t;

/* The store's hooks for boards without one: no storage. */
__attribute__((weak)) uint32_t mcu_port_store_bytes(void) { return 0; }
__attribute__((weak)) int mcu_port_store_erase(uint32_t slot) {
  (void)slot;
  return -1;
}
__attribute__((weak)) int mcu_port_store_read(uint32_t slot, uint32_t offset, void *dst,
                                              uint32_t bytes) {
  (void)slot, (void)offset, (void)dst, (void)bytes;
  return -1;
}
__attribute__((weak)) int mcu_port_store_write(uint32_t slot, uint32_t offset, const void *src,
                                               uint32_t bytes) {
  (void)slot, (void)offset, (void)src, (void)bytes;
  return -1;
}

uint32_t mcu_crc32(uint32_t crc, const void *data, uint32_t n) {
  const uint8_t *p = data;
  crc = ~crc;
  for (uint32_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int b = 0; b < 8; ++b) {
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
  }
  return ~crc;
}

static uint32_t state_bytes(const mcu_model_t *model) {
  uint32_t total = 0;
  for (uint32_t i = 0; i < model->num_variables; ++i) {
    total += model->variables[i].bytes;
  }
  return total;
}

static uint32_t header_crc(const ckpt_header_t *h) {
  return mcu_crc32(0, h, (uint32_t)offsetof(ckpt_header_t, header_crc));
}

/* The slot's sequence number when it holds a valid checkpoint of this model, else 0. */
static uint32_t valid_sequence(uint32_t slot, uint32_t bytes, uint32_t tag) {
  ckpt_header_t h;
  if (mcu_port_store_read(slot, 0, &h, sizeof h) != 0) {
    return 0;
  }
  if (h.magic != CKPT_MAGIC || h.version != CKPT_VERSION || h.bytes != bytes || h.tag != tag ||
      h.header_crc != header_crc(&h) || h.sequence == 0) {
    return 0;
  }
  uint8_t chunk[CKPT_CHUNK];
  uint32_t crc = 0;
  for (uint32_t at = 0; at < bytes; at += CKPT_CHUNK) {
    uint32_t n = bytes - at < CKPT_CHUNK ? bytes - at : CKPT_CHUNK;
    if (mcu_port_store_read(slot, MCU_CKPT_HEADER_BYTES + at, chunk, n) != 0) {
      return 0;
    }
    crc = mcu_crc32(crc, chunk, n);
  }
  return crc == h.data_crc ? h.sequence : 0;
}

static mcu_ckpt_status_t usable(const mcu_model_t *model, uint32_t bytes) {
  if (model->num_variables == 0 || bytes == 0) {
    return MCU_CKPT_NO_STATE;
  }
  if (mcu_port_store_bytes() < MCU_CKPT_HEADER_BYTES + bytes) {
    return MCU_CKPT_NO_STORAGE;
  }
  return MCU_CKPT_OK;
}

mcu_ckpt_status_t mcu_checkpoint_save(const mcu_model_t *model, uint32_t tag, uint32_t *sequence) {
  const uint32_t bytes = state_bytes(model);
  mcu_ckpt_status_t s = usable(model, bytes);
  if (s != MCU_CKPT_OK) {
    return s;
  }
  uint32_t seq0 = valid_sequence(0, bytes, tag), seq1 = valid_sequence(1, bytes, tag);
  uint32_t slot = seq0 > seq1 ? 1u : 0u; /* never over the newest valid checkpoint */
  ckpt_header_t h = {CKPT_MAGIC, CKPT_VERSION, (seq0 > seq1 ? seq0 : seq1) + 1u, bytes, tag, 0,
                     0, 0};
  if (mcu_port_store_erase(slot) != 0) {
    return MCU_CKPT_IO;
  }
  uint32_t at = MCU_CKPT_HEADER_BYTES;
  for (uint32_t i = 0; i < model->num_variables; ++i) {
    const mcu_variable_t *v = &model->variables[i];
    if (mcu_port_store_write(slot, at, v->data, v->bytes) != 0) {
      return MCU_CKPT_IO;
    }
    h.data_crc = mcu_crc32(h.data_crc, v->data, v->bytes);
    at += v->bytes;
  }
  h.header_crc = header_crc(&h);
  if (mcu_port_store_write(slot, 0, &h, sizeof h) != 0) {
    return MCU_CKPT_IO;
  }
  *sequence = h.sequence;
  return MCU_CKPT_OK;
}

mcu_ckpt_status_t mcu_checkpoint_load(const mcu_model_t *model, uint32_t tag, uint32_t *sequence) {
  const uint32_t bytes = state_bytes(model);
  mcu_ckpt_status_t s = usable(model, bytes);
  if (s != MCU_CKPT_OK) {
    return s;
  }
  uint32_t seq0 = valid_sequence(0, bytes, tag), seq1 = valid_sequence(1, bytes, tag);
  if (seq0 == 0 && seq1 == 0) {
    return MCU_CKPT_NONE_VALID;
  }
  uint32_t slot = seq1 > seq0 ? 1u : 0u;
  uint32_t at = MCU_CKPT_HEADER_BYTES;
  for (uint32_t i = 0; i < model->num_variables; ++i) {
    const mcu_variable_t *v = &model->variables[i];
    if (mcu_port_store_read(slot, at, v->data, v->bytes) != 0) {
      return MCU_CKPT_IO; /* checked a moment ago: only a failing store gets here */
    }
    at += v->bytes;
  }
  *sequence = slot ? seq1 : seq0;
  return MCU_CKPT_OK;
}
