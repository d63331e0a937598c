/* SignalFilterBank, bit-exact with TFLM signal/src/filter_bank.cc FilterbankAccumulateChannels:
 * each energy bin adds weight * energy to its channel and unweight * energy to the next one, in
 * uint64 arithmetic (an int16 weight converts to uint64 modulo 2^64). TFLM accumulates
 * num_channels + 1 channels in a work area and copies 1..num_channels to the output; the kernel
 * writes those to the output directly. */
#include "mcu/kernels/signal_filter_bank.h"

mcu_status_t mcu_signal_filter_bank_uint32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_signal_filter_bank_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 6 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  int32_t outputs = mcu_num_elements(mcu_output_tensor(ctx, node, 0));
  MCU_ENSURE_MODEL(outputs <= p->num_channels, MCU_ERR_BAD_MODEL);
  const uint32_t *energy = mcu_input(ctx, node, 0);
  const int16_t *weights = mcu_input(ctx, node, 1);
  const int16_t *unweights = mcu_input(ctx, node, 2);
  const int16_t *freq_starts = mcu_input(ctx, node, 3);
  const int16_t *weight_starts = mcu_input(ctx, node, 4);
  const int16_t *widths = mcu_input(ctx, node, 5);
  uint64_t *y = mcu_output(ctx, node, 0);
  uint64_t weighted = 0;
  uint64_t unweighted = 0;
  for (int32_t c = 0; c <= p->num_channels; ++c) {
    for (int32_t j = 0; j < widths[c]; ++j) {
      uint64_t e = energy[freq_starts[c] + j];
      weighted += (uint64_t)(int64_t)weights[weight_starts[c] + j] * e;
      unweighted += (uint64_t)(int64_t)unweights[weight_starts[c] + j] * e;
    }
    if (c >= 1 && c <= outputs) {
      y[c - 1] = weighted;
    }
    weighted = unweighted;
    unweighted = 0;
  }
  return MCU_OK;
}
