#ifndef MCU_KERNELS_SIGNAL_FILTER_BANK_LOG_H
#define MCU_KERNELS_SIGNAL_FILTER_BANK_LOG_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalFilterBankLog (custom): output_scale * ln(x << input_correction_bits)
 * in fixed point, capped at INT16_MAX, 0 for a scaled input of 0 or 1; uint32 in, int16 out. */
typedef struct {
  uint32_t output_scale;
  int32_t input_correction_bits; /* 0..31 */
} mcu_signal_filter_bank_log_params_t;

mcu_eval_t mcu_signal_filter_bank_log_uint32;

#endif
