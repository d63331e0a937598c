#ifndef MCU_KERNELS_SIGNAL_PCAN_H
#define MCU_KERNELS_SIGNAL_PCAN_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalPCAN (custom): per-channel energy normalization. Inputs: 0 channels
 * (uint32), 1 noise estimate (uint32), 2 gain lookup table (int16, >= 125 entries: every
 * estimate's interval is in range). Output: uint32 with 6 fractional bits. */
typedef struct {
  int32_t snr_shift; /* 0..63 */
} mcu_signal_pcan_params_t;

mcu_eval_t mcu_signal_pcan_uint32;

#endif
