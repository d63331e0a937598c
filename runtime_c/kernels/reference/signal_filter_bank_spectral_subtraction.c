/* SignalFilterBankSpectralSubtraction, bit-exact with TFLM
 * signal/src/filter_bank_spectral_subtraction.cc: per channel, the noise estimate follows the
 * signal (scaled up by smoothing_bits) through a one-pole filter in uint64, the estimate used is
 * capped at the signal (and stored capped with clamping), and the output is the difference
 * scaled back down, floored at min_signal_remaining times the input. */
#include "mcu/kernels/signal_filter_bank_spectral_subtraction.h"

mcu_status_t mcu_signal_filter_bank_spectral_subtraction_uint32(const mcu_node_t *node,
                                                                mcu_context_t *ctx) {
  const mcu_signal_filter_bank_spectral_subtraction_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 2, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(mcu_num_elements(mcu_input_tensor(ctx, node, 0)) == p->num_channels &&
                       mcu_num_elements(mcu_output_tensor(ctx, node, 0)) == p->num_channels &&
                       mcu_num_elements(mcu_output_tensor(ctx, node, 1)) == p->num_channels,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->smoothing_bits >= 0 && p->smoothing_bits < 32 &&
                       p->spectral_subtraction_bits >= 0 && p->spectral_subtraction_bits < 64,
                   MCU_ERR_BAD_MODEL);
  const uint32_t *x = mcu_input(ctx, node, 0);
  uint32_t *y = mcu_output(ctx, node, 0);
  uint32_t *noise = mcu_output(ctx, node, 1); /* the variable: last invoke's estimate */
  for (int32_t i = 0; i < p->num_channels; ++i) {
    uint32_t smoothing = (i & 1) == 0 ? p->smoothing : p->alternate_smoothing;
    uint32_t one_minus = (i & 1) == 0 ? p->one_minus_smoothing : p->alternate_one_minus_smoothing;
    uint32_t signal = x[i] << p->smoothing_bits;
    uint64_t filtered = (uint64_t)signal * smoothing + (uint64_t)noise[i] * one_minus;
    noise[i] = (uint32_t)(filtered >> p->spectral_subtraction_bits);
    uint32_t estimate = noise[i];
    if (estimate > signal) {
      estimate = signal;
      if (p->clamping) {
        noise[i] = estimate;
      }
    }
    uint32_t floor =
        (uint32_t)(((uint64_t)x[i] * p->min_signal_remaining) >> p->spectral_subtraction_bits);
    uint32_t subtracted = (signal - estimate) >> p->smoothing_bits;
    y[i] = subtracted > floor ? subtracted : floor;
  }
  return MCU_OK;
}
