/* SignalPCAN, bit-exact with TFLM signal/src/pcan_argc_fixed.cc: the gain is a piecewise
 * quadratic of the noise estimate read from the table by the estimate's most significant bit
 * (WideDynamicFunction), the snr is the channel times the gain shifted by snr_shift, and the
 * output compresses it (PcanShrink, 12 snr bits to 6 output bits). */
#include "mcu/kernels/signal_pcan.h"

#include "mcu/quant.h"

#define SNR_BITS 12
#define OUTPUT_BITS 6
#define MIN_LUT_ENTRIES 125 /* 4 * 32 - 6 + 3: the table entries the largest interval reads */

static int16_t gain_of(uint32_t x, const int16_t *lut) {
  if (x <= 2) {
    return lut[x];
  }
  int32_t interval = (int32_t)mcu_msb32(x);
  const int16_t *seg = lut + 4 * interval - 6;
  uint32_t moved = interval < 11 ? x << (11 - interval) : x >> (interval - 11);
  int32_t frac = (int32_t)(moved & 0x3FF);
  int32_t result = ((int32_t)seg[2] * frac) >> 5;
  result += (int32_t)((uint32_t)seg[1] << 5);
  result *= frac;
  result = (result + (1 << 14)) >> 15;
  result += seg[0];
  return (int16_t)result;
}

static uint32_t shrink(uint32_t x) {
  if (x < ((uint32_t)2 << SNR_BITS)) {
    return (x * x) >> (2 + 2 * SNR_BITS - OUTPUT_BITS);
  }
  return (x >> (SNR_BITS - OUTPUT_BITS)) - ((uint32_t)1 << OUTPUT_BITS);
}

mcu_status_t mcu_signal_pcan_uint32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_signal_pcan_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 3 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  int32_t n = mcu_num_elements(mcu_input_tensor(ctx, node, 0));
  MCU_ENSURE_MODEL(mcu_num_elements(mcu_output_tensor(ctx, node, 0)) == n &&
                       mcu_num_elements(mcu_input_tensor(ctx, node, 1)) >= n &&
                       mcu_num_elements(mcu_input_tensor(ctx, node, 2)) >= MIN_LUT_ENTRIES,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->snr_shift >= 0 && p->snr_shift < 64, MCU_ERR_BAD_MODEL);
  const uint32_t *x = mcu_input(ctx, node, 0);
  const uint32_t *noise = mcu_input(ctx, node, 1);
  const int16_t *lut = mcu_input(ctx, node, 2);
  uint32_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    uint32_t gain = (uint32_t)(int32_t)gain_of(noise[i], lut);
    uint32_t snr = (uint32_t)(((uint64_t)x[i] * gain) >> p->snr_shift);
    y[i] = shrink(snr);
  }
  return MCU_OK;
}
