/* SignalWindow, bit-exact with TFLM signal/src/window.cc ApplyWindow: (x * w) >> shift in int32,
 * saturated to int16, the weights applied to every run of their length. */
#include "mcu/kernels/signal_window.h"

mcu_status_t mcu_signal_window_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_signal_window_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *xt = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *wt = mcu_input_tensor(ctx, node, 1);
  int32_t n = mcu_num_elements(xt);
  int32_t width = mcu_num_elements(wt);
  MCU_ENSURE_MODEL(width > 0 && n % width == 0 &&
                       mcu_num_elements(mcu_output_tensor(ctx, node, 0)) == n,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->shift >= 0 && p->shift < 32, MCU_ERR_BAD_MODEL);
  const int16_t *x = mcu_input(ctx, node, 0);
  const int16_t *w = mcu_input(ctx, node, 1);
  int16_t *y = mcu_output(ctx, node, 0);
  for (int32_t start = 0; start < n; start += width) {
    for (int32_t i = 0; i < width; ++i) {
      int32_t raw = ((int32_t)x[start + i] * w[i]) >> p->shift;
      y[start + i] = (int16_t)(raw < INT16_MIN ? INT16_MIN : raw > INT16_MAX ? INT16_MAX : raw);
    }
  }
  return MCU_OK;
}
