/* SignalFilterBankSquareRoot, bit-exact with TFLM signal/src/square_root_32.cc and
 * square_root_64.cc: bit-by-bit square roots rounded up when the remainder exceeds the root (not
 * past 0xFFFF / 0xFFFFFFFF); values below 2^32 take the 32-bit path, as TFLM's shortcut does. */
#include "mcu/kernels/signal_filter_bank_square_root.h"

#include "mcu/quant.h"

static uint32_t sqrt32(uint32_t num) {
  if (num == 0) {
    return 0;
  }
  uint32_t res = 0;
  int32_t top = (int32_t)(32 - mcu_msb32(num)) | 1;
  uint32_t bit = (uint32_t)1 << (31 - top);
  for (int32_t k = (31 - top) / 2 + 1; k > 0; --k) {
    if (num >= res + bit) {
      num -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
    bit >>= 2;
  }
  if (num > res && res != 0xFFFFu) {
    ++res;
  }
  return (uint16_t)res;
}

static uint32_t sqrt64(uint64_t num) {
  if ((num >> 32) == 0) {
    return sqrt32((uint32_t)num);
  }
  uint64_t res = 0;
  int32_t top = (int32_t)(64 - mcu_msb64(num)) | 1;
  uint64_t bit = (uint64_t)1 << (63 - top);
  for (int32_t k = (63 - top) / 2 + 1; k > 0; --k) {
    if (num >= res + bit) {
      num -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
    bit >>= 2;
  }
  if (num > res && res != 0xFFFFFFFFu) {
    ++res;
  }
  return (uint32_t)res;
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
