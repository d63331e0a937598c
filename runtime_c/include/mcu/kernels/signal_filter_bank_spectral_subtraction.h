#ifndef MCU_KERNELS_SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION_H
#define MCU_KERNELS_SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalFilterBankSpectralSubtraction (custom): subtracts a running noise
 * estimate from each uint32 channel. Output 0: the result; output 1: the noise estimate, a
 * variable tensor (the importer makes it one) that the kernel updates in place: TFLM keeps the
 * estimate in a persistent buffer, zeroed at Prepare and on Reset, and copies it to output 1. */
typedef struct {
  int32_t num_channels;
  uint32_t smoothing; /* even channels; scale 1 << spectral_subtraction_bits */
  uint32_t one_minus_smoothing;
  uint32_t alternate_smoothing; /* odd channels */
  uint32_t alternate_one_minus_smoothing;
  uint32_t min_signal_remaining;
  int32_t smoothing_bits;            /* 0..31 */
  int32_t spectral_subtraction_bits; /* 0..63 */
  int32_t clamping;                  /* 0 or 1 */
} mcu_signal_filter_bank_spectral_subtraction_params_t;

mcu_eval_t mcu_signal_filter_bank_spectral_subtraction_uint32;

#endif
