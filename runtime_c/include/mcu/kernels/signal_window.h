#ifndef MCU_KERNELS_SIGNAL_WINDOW_H
#define MCU_KERNELS_SIGNAL_WINDOW_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalWindow (custom): each consecutive run of weights-length int16 input
 * values times the int16 weights, shifted right by `shift`, saturated to int16. Inputs: 0 input,
 * 1 weights (rank 1, its length divides the input's element count). */
typedef struct {
  int32_t shift; /* 0..31 */
} mcu_signal_window_params_t;

mcu_eval_t mcu_signal_window_int16;

#endif
