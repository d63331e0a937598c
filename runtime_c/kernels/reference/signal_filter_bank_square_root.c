/* SignalFilterBankSquareRoot, bit-exact with TFLM signal/src/square_root_32.cc and
 * square_root_64.cc: bit-by-bit square roots rounded up when the remainder exceeds the root (not
 * past 0xFFFF / 0xFFFFFFFF); values below 2^32 take the 32-bit path, as TFLM's shortcut does. */
#include "mcu/kernels/signal_filter_bank_square_root.h"

#include "mcu/quant.h"

/* `name`: the bit-by-bit root of a nonzero `t` of `bits` bits (`msb` its highest set bit,
 * 1-based), rounded up when the remainder exceeds the root unless the root is `max`. */
#define SQRT_BITS(name, t, bits, msb, max)                     \
  static t name(t num) {                                       \
    t res = 0;                                                 \
    int32_t top = (int32_t)((bits) - msb(num)) | 1;            \
    t bit = (t)1 << ((bits) - 1 - top);                        \
    for (int32_t k = ((bits) - 1 - top) / 2 + 1; k > 0; --k) { \
      if (num >= res + bit) {                                  \
        num -= res + bit;                                      \
        res = (res >> 1) + bit;                                \
      } else {                                                 \
        res >>= 1;                                             \
      }                                                        \
      bit >>= 2;                                               \
    }                                                          \
    if (num > res && res != (max)) {                           \
      ++res;                                                   \
    }                                                          \
    return res;                                                \
  }

SQRT_BITS(sqrt32_bits, uint32_t, 32, mcu_msb32, 0xFFFFu)
SQRT_BITS(sqrt64_bits, uint64_t, 64, mcu_msb64, 0xFFFFFFFFu)

static uint32_t sqrt32(uint32_t num) {
  return num == 0 ? 0 : (uint16_t)sqrt32_bits(num);
}

static uint32_t sqrt64(uint64_t num) {
  return (num >> 32) == 0 ? sqrt32((uint32_t)num) : (uint32_t)sqrt64_bits(num);
}

mcu_status_t mcu_signal_filter_bank_square_root_uint64(const mcu_node_t *node,
                                                       mcu_context_t *ctx) {
  MCU_ENSURE_MODEL(node->num_inputs == 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  int32_t n = mcu_num_elements(mcu_input_tensor(ctx, node, 0));
  MCU_ENSURE_MODEL(mcu_num_elements(mcu_output_tensor(ctx, node, 0)) == n, MCU_ERR_BAD_MODEL);
  const uint64_t *x = mcu_input(ctx, node, 0);
  int32_t shift = *(const int32_t *)mcu_input(ctx, node, 1);
  MCU_ENSURE(shift >= 0 && shift < 32, MCU_ERR_INPUT); /* data: FftAutoScale's shift */
  uint32_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    y[i] = sqrt64(x[i]) >> shift;
  }
  return MCU_OK;
}
