#ifndef MCU_KERNELS_SIGNAL_FILTER_BANK_H
#define MCU_KERNELS_SIGNAL_FILTER_BANK_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalFilterBank (custom): triangular mel channels over a uint32 energy
 * spectrum, accumulated in uint64. Inputs: 0 energies (uint32), 1 weights, 2 unweights, 3 channel
 * frequency starts, 4 channel weight starts, 5 channel widths (all int16, constant, the last three
 * with num_channels + 1 entries, every index in range: checked at build time). Output: the
 * channels 1..num_channels (channel 0 only carries its unweights into channel 1), uint64. */
typedef struct {
  int32_t num_channels;
} mcu_signal_filter_bank_params_t;

mcu_eval_t mcu_signal_filter_bank_uint32;

#endif
