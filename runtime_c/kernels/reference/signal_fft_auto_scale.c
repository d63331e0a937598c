/* SignalFftAutoScale, bit-exact with TFLM signal/src/fft_auto_scale.cc and max_abs.cc (its
 * portable path) as TFLM's GCC build runs them. The largest magnitude is kept in an int16, so an
 * input of -32768 stores -32768 there and a later larger value replaces it, as in TFLM; the
 * most significant bit of zero (or of a negative maximum, seen as uint32) counts as 32, giving
 * shift 0. */
#include "mcu/kernels/signal_fft_auto_scale.h"

#include "mcu/quant.h"

static int16_t max_abs(const int16_t *x, int32_t n) {
  int16_t max = 0;
  for (int32_t i = 0; i < n; ++i) {
    int16_t v = x[i];
    if (v > max) {
      max = v;
    } else if (-v > max) {
      max = (int16_t)-v;
    }
  }
  return max;
}

mcu_status_t mcu_signal_fft_auto_scale_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 2, MCU_ERR_BAD_MODEL);
  int32_t n = mcu_num_elements(mcu_output_tensor(ctx, node, 0));
  MCU_ENSURE_MODEL(mcu_num_elements(mcu_input_tensor(ctx, node, 0)) == n, MCU_ERR_BAD_MODEL);
  const int16_t *x = mcu_input(ctx, node, 0);
  int16_t *y = mcu_output(ctx, node, 0);
  int32_t *scale_bits = mcu_output(ctx, node, 1);
  int32_t bits = 16 - (int32_t)mcu_msb32((uint32_t)(int32_t)max_abs(x, n)) - 1;
  if (bits < 0) {
    bits = 0;
  }
  for (int32_t i = 0; i < n; ++i) {
    y[i] = (int16_t)(x[i] * ((int32_t)1 << bits));
  }
  *scale_bits = bits;
  return MCU_OK;
}
