#ifndef MCU_KERNELS_SIGNAL_ENERGY_H
#define MCU_KERNELS_SIGNAL_ENERGY_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalEnergy (custom): output[i] = re^2 + im^2 of the int16 complex input
 * element i, as uint32, for i in [start_index, end_index); other output elements are left as they
 * are, as in TFLM. */
typedef struct {
  int32_t start_index;
  int32_t end_index; /* <= the output's length and the input's complex count */
} mcu_signal_energy_params_t;

mcu_eval_t mcu_signal_energy_int16;

#endif
