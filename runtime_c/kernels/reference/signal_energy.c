/* SignalEnergy, bit-exact with TFLM signal/src/energy.cc SpectrumToEnergy: the int32 sum of the
 * two squares, which wraps for (-32768, -32768), taken as uint32. */
#include "mcu/kernels/signal_energy.h"

mcu_status_t mcu_signal_energy_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_signal_energy_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->start_index >= 0 &&
                       p->end_index <= mcu_num_elements(mcu_output_tensor(ctx, node, 0)) &&
                       p->end_index <= mcu_num_elements(mcu_input_tensor(ctx, node, 0)) / 2,
                   MCU_ERR_BAD_MODEL);
  const int16_t *x = mcu_input(ctx, node, 0);
  uint32_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = p->start_index; i < p->end_index; ++i) {
    int32_t re = x[2 * i];
    int32_t im = x[2 * i + 1];
    y[i] = (uint32_t)(re * re) + (uint32_t)(im * im);
  }
  return MCU_OK;
}
